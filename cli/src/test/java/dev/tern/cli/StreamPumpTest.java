package dev.tern.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The blocks between nc's standard streams and the stack's thread: order, boundaries, the end, backpressure, errors. */
class StreamPumpTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    /** Takes the next block, waiting for the pump thread; null once the input ended. */
    private static StreamPump.Block await(StreamPump pump) {
        final long deadline = System.nanoTime() + WAIT_NS;
        while (System.nanoTime() - deadline < 0) {
            final StreamPump.Block block = pump.next();
            if (block != null) {
                return block;
            }
            if (pump.ended()) {
                return null;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no block and no end within 10 s");
    }

    @Test
    void readingHandsOverEveryByteInOrderAndThenTheEnd() {
        final byte[] input = new byte[1_000_003];
        new SplittableRandom(1).nextBytes(input);
        final StreamPump pump = StreamPump.reading(Channels.newChannel(new ByteArrayInputStream(input)), 64 << 10, 3, "test-in");
        final ByteArrayOutputStream got = new ByteArrayOutputStream();
        for (StreamPump.Block block; (block = await(pump)) != null; ) {
            final byte[] bytes = new byte[block.buffer.remaining()];
            block.buffer.get(bytes);
            got.write(bytes, 0, bytes.length);
            pump.release(block);
        }
        assertArrayEquals(input, got.toByteArray());
        assertTrue(pump.ended());
        assertNull(pump.failure());
    }

    @Test
    void readingMakesOneBlockPerReadSoEachDatagramStaysWhole() {
        final List<byte[]> chunks = List.of("first".getBytes(), "second, longer".getBytes(), "3".getBytes());
        final InputStream oneChunkPerRead = new InputStream() {
            private int next;

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (next == chunks.size()) {
                    return -1;
                }
                final byte[] chunk = chunks.get(next++);
                System.arraycopy(chunk, 0, b, off, chunk.length);
                return chunk.length;
            }
        };
        final StreamPump pump = StreamPump.reading(Channels.newChannel(oneChunkPerRead), 8192, 2, "test-in");
        final List<String> blocks = new ArrayList<>();
        for (StreamPump.Block block; (block = await(pump)) != null; ) {
            final byte[] bytes = new byte[block.buffer.remaining()];
            block.buffer.get(bytes);
            blocks.add(new String(bytes));
            pump.release(block);
        }
        assertEquals(List.of("first", "second, longer", "3"), blocks);
    }

    @Test
    void aBlockIsTakenAgainUntilItIsReleasedAndReleasesKeepOrder() {
        final StreamPump pump = StreamPump.reading(Channels.newChannel(new ByteArrayInputStream(new byte[100])), 64, 4, "test-in");
        final StreamPump.Block first = await(pump);
        assertSame(first, pump.next(), "the same block until it is released");
        first.buffer.position(first.buffer.limit());
        pump.release(first);
        final StreamPump.Block second = await(pump);
        assertNotNull(second);
        assertThrows(IllegalStateException.class, () -> pump.release(first), "only the oldest block can go back");
    }

    @Test
    void writingWritesBlocksInOrderAndFinishWaitsForTheLast() throws InterruptedException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final StreamPump pump = StreamPump.writing(Channels.newChannel(out), 1000, 2, "test-out");
        final ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (int i = 0; i < 50; i++) {
            StreamPump.Block block;
            final long deadline = System.nanoTime() + WAIT_NS;
            while ((block = pump.claim()) == null) {
                assertTrue(System.nanoTime() - deadline < 0, "a block comes back once written");
                Thread.onSpinWait();
            }
            for (int j = 0; j <= i; j++) {
                block.buffer.put((byte) (i + j));
                expected.write(i + j);
            }
            pump.submit(block);
        }
        pump.finish();
        assertArrayEquals(expected.toByteArray(), out.toByteArray());
    }

    @Test
    void whenEveryBlockWaitsToBeWrittenClaimGivesNothing() throws Exception {
        final GatedChannel stuck = new GatedChannel();
        final StreamPump pump = StreamPump.writing(stuck, 16, 2, "test-out");
        for (int i = 0; i < 2; i++) {
            final StreamPump.Block block = pump.claim();
            block.buffer.put((byte) i);
            pump.submit(block);
        }
        assertNull(pump.claim(), "both blocks are in flight: the owner stops reading the connection");
        stuck.open();
        pump.finish();
        assertNotNull(pump.claim());
    }

    @Test
    void aFailedWriteIsReportedAndLaterBlocksAreDropped() throws InterruptedException {
        final WritableByteChannel broken = new WritableByteChannel() {
            @Override
            public int write(ByteBuffer src) throws IOException {
                throw new IOException("Broken pipe");
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
            }
        };
        final StreamPump pump = StreamPump.writing(broken, 16, 2, "test-out");
        for (int i = 0; i < 5; i++) {
            StreamPump.Block block;
            final long deadline = System.nanoTime() + WAIT_NS;
            while ((block = pump.claim()) == null) {
                assertTrue(System.nanoTime() - deadline < 0, "blocks keep coming back after the failure");
                Thread.onSpinWait();
            }
            block.buffer.put((byte) i);
            pump.submit(block);
        }
        pump.finish();
        assertEquals("Broken pipe", pump.failure().getMessage());
    }

    /**
     * A writing pump is idle once its thread has taken every submitted block, even while it still writes the last
     * one: that is when nc hands over a partly filled block, so a fast stream waits behind no queue of small writes.
     */
    @Test
    void writingIsIdleOnceEverySubmittedBlockWasTakenEvenWhileTheLastIsBeingWritten() throws Exception {
        final GatedChannel slow = new GatedChannel();
        final StreamPump pump = StreamPump.writing(slow, 16, 3, "test-out");
        assertTrue(pump.idle(), "nothing submitted");
        final StreamPump.Block first = pump.claim();
        first.buffer.put((byte) 1);
        pump.submit(first);
        assertTrue(slow.writing.await(10, TimeUnit.SECONDS));
        assertTrue(pump.idle(), "the one block submitted is being written: taken");
        final StreamPump.Block second = pump.claim();
        second.buffer.put((byte) 2);
        pump.submit(second);
        assertTrue(!pump.idle(), "a second block waits behind the first");
        slow.open();
        pump.finish();
        assertArrayEquals(new byte[] {1, 2}, slow.written.toByteArray());
        assertTrue(pump.idle());
    }

    /** A channel whose writes wait until {@link #open()}, then keep what they were given. */
    private static final class GatedChannel implements WritableByteChannel {
        /** Counted down when the first write begins (and waits). */
        final CountDownLatch writing = new CountDownLatch(1);
        final ByteArrayOutputStream written = new ByteArrayOutputStream();
        private final CountDownLatch gate = new CountDownLatch(1);

        void open() {
            gate.countDown();
        }

        @Override
        public int write(ByteBuffer source) throws IOException {
            writing.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            final int n = source.remaining();
            final byte[] bytes = new byte[n];
            source.get(bytes);
            synchronized (written) {
                written.write(bytes, 0, n);
            }
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}
