package dev.tern.cli;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * Moves bytes between a blocking channel (the command's standard input or output) and the thread that owns the stack,
 * in large blocks, on a thread of its own: a stack must be polled all the time, so its owner never waits in
 * {@code read(2)} or {@code write(2)} on a terminal or a pipe.
 *
 * <pre>
 *   reading (stdin):  [channel] --read(2) into a free block--> filled --next()--> owner: connection.write(block)
 *                         ^                                                            |
 *                         +------------------------ free <--- release(block) ----------+
 *   writing (stdout): owner: claim() a free block, connection.read() into it, submit() --> filled
 *                         ^                                                                 | write(2) all of it
 *                         +------------------------ free <--------------- pump thread ------+
 * </pre>
 * A fixed set of direct buffers ({@code blocks} x {@code blockSize}) goes round between the two threads through two
 * bounded queues, so nothing is allocated or copied after the start beyond the one copy each way between a block and
 * the socket's ring (the stack's API copies) and the kernel's own: the channel reads into and writes from the
 * block's memory. When every block is in flight the owner stops taking (output: stops reading the connection, so
 * the receive window closes) and the pump thread waits (input: stops reading stdin): backpressure both ways.
 *
 * <p>A reading pump makes one {@code read} per block: from a pipe that is whatever the writer had written (up to the
 * block size), from a file a whole block; for UDP each block is one datagram, as OpenBSD netcat reads one buffer per
 * datagram. The end of the input is reported once every block before it was taken ({@link #ended()}); a read error
 * counts as the end, as it always did in {@code nc}.
 *
 * <p>Owned by two threads: the owner calls {@link #next}, {@link #release}, {@link #claim}, {@link #submit},
 * {@link #idle}, {@link #ended}, {@link #failure} and {@link #finish}; the pump thread, a daemon, does the blocking
 * I/O.
 */
final class StreamPump {
    /** One reusable buffer and the memory segment over it (made once, so the owner allocates nothing per block). */
    static final class Block {
        final ByteBuffer buffer;
        final MemorySegment segment;

        private Block(int size) {
            buffer = ByteBuffer.allocateDirect(size);
            segment = MemorySegment.ofBuffer(buffer);
        }
    }

    private static final Block END = new Block(1);

    private final ArrayBlockingQueue<Block> free;
    private final ArrayBlockingQueue<Block> filled;
    private final Thread thread;
    private volatile IOException failure;
    private boolean ended;

    private StreamPump(int blockSize, int blocks, String name, ReadableByteChannel in, WritableByteChannel out) {
        free = new ArrayBlockingQueue<>(blocks + 1);
        filled = new ArrayBlockingQueue<>(blocks + 1);
        for (int i = 0; i < blocks; i++) {
            free.add(new Block(blockSize));
        }
        thread = new Thread(in != null ? () -> readAll(in) : () -> writeAll(out), name);
        thread.setDaemon(true);
        thread.start();
    }

    /** A pump that reads {@code in} into blocks of up to {@code blockSize} bytes, {@code blocks} of them in flight. */
    static StreamPump reading(ReadableByteChannel in, int blockSize, int blocks, String threadName) {
        return new StreamPump(blockSize, blocks, threadName, in, null);
    }

    /** A pump that writes submitted blocks to {@code out}, in order, {@code blocks} of them in flight. */
    static StreamPump writing(WritableByteChannel out, int blockSize, int blocks, String threadName) {
        return new StreamPump(blockSize, blocks, threadName, null, out);
    }

    // ---------------------------------------------------------------------------------------------- reading

    private void readAll(ReadableByteChannel in) {
        try {
            while (true) {
                final Block block = free.take();
                final int n;
                try {
                    n = in.read(block.buffer.clear());
                } catch (IOException e) {
                    failure = e;
                    break; // a read error ends the input, as the end of the stream does
                }
                if (n < 0) {
                    break;
                }
                block.buffer.flip();
                filled.put(block);
            }
            filled.put(END);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The oldest block of input not yet released (its buffer's position to limit is what is left of it), or null
     * when none is waiting now. The owner writes from it, advances the buffer's position, and {@link #release}s it once
     * it has nothing left.
     */
    Block next() {
        final Block block = filled.peek();
        if (block == END) {
            filled.poll();
            ended = true;
            return null;
        }
        return block;
    }

    /** Gives a block taken with {@link #next} back to be filled again. */
    void release(Block block) {
        if (filled.poll() != block) {
            throw new IllegalStateException("blocks are released in the order next() gave them");
        }
        free.add(block);
    }

    /** True once the input ended (or failed to read) and every block before the end was taken. */
    boolean ended() {
        if (!ended) {
            next();
        }
        return ended;
    }

    // ---------------------------------------------------------------------------------------------- writing

    private void writeAll(WritableByteChannel out) {
        try {
            while (true) {
                final Block block = filled.take();
                if (block == END) {
                    return;
                }
                try {
                    while (failure == null && block.buffer.hasRemaining()) {
                        out.write(block.buffer);
                    }
                } catch (IOException e) {
                    failure = e; // from now on blocks are dropped: the owner sees the failure and stops
                }
                free.put(block);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A free block, cleared, to fill and {@link #submit}; null when all are waiting to be written. */
    Block claim() {
        final Block block = free.poll();
        if (block != null) {
            block.buffer.clear();
        }
        return block;
    }

    /** Whether {@link #claim} would give a block now. */
    boolean hasFreeBlock() {
        return !free.isEmpty();
    }

    /** Queues the block's buffer from 0 to its position for writing (the position is where the owner's data ends). */
    void submit(Block block) {
        block.buffer.flip();
        if (!filled.offer(block)) {
            throw new IllegalStateException("more blocks submitted than claimed");
        }
    }

    /**
     * Writing: true when the pump thread has taken every submitted block (it may still be writing the last one), so a
     * block submitted now is written next, without waiting behind others.
     */
    boolean idle() {
        return filled.isEmpty();
    }

    /** The error the channel gave (writing: the output is gone, e.g. a closed pipe; reading: why the input ended). */
    IOException failure() {
        return failure;
    }

    /** Writing: waits until every submitted block was written (or the channel failed), then stops the thread. */
    void finish() throws InterruptedException {
        filled.put(END);
        thread.join();
    }
}
