package dev.tern.stack;

import dev.tern.ethernet.link.FrameHandler;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * Frames other shards of a sharded stack hand to this one: a frame the link delivered to the wrong shard, and an ICMP
 * message (shard 0 receives them all) about a flow this shard owns. Any shard's thread posts a copy of the frame; the
 * owning shard's thread delivers it to its stack at its next receive, as if its own link had received it
 * ({@link ShardFilterLink}). See docs/DESIGN.md, "Shards".
 *
 * <p>An Agrona many-to-one ring buffer of {@value #CAPACITY} bytes, off-heap. A record is the frame's receive flags
 * (an int, padded to 8 bytes so the frame keeps the record's 8-byte alignment) followed by the frame. Posting copies
 * the frame once; delivering copies nothing. A full inbox refuses the frame, which the poster counts and drops (the
 * hand-over is for stray frames and ICMP errors, never the bulk of a flow). Allocates nothing per frame.
 */
final class ShardInbox {
    /** 1 MiB: up to 16 frames of 64 KiB (the largest an AF_PACKET link hands over) or some 700 of 1,500 bytes. */
    static final int CAPACITY = 1 << 20;
    private static final int MESSAGE_TYPE = 1;
    private static final int FLAGS_LENGTH = 8;

    private final ManyToOneRingBuffer ring;
    private final MemorySegment memory;
    private final MessageHandler deliver = this::deliver;
    private FrameHandler handler;
    /** The shard this inbox belongs to, which a poster wakes if it sleeps ({@link NetStack#awaitWork}); null until set. */
    private NetStack owner;

    ShardInbox() {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(CAPACITY + RingBufferDescriptor.TRAILER_LENGTH);
        this.ring = new ManyToOneRingBuffer(new UnsafeBuffer(buffer));
        this.memory = MemorySegment.ofBuffer(buffer);
    }

    /** From any shard's thread: a copy of the frame for this shard; false (nothing taken) when it does not fit now. */
    boolean post(MemorySegment frame, long offset, int length, int flags) {
        if (length + FLAGS_LENGTH > ring.maxMsgLength()) {
            return false;
        }
        final int index = ring.tryClaim(MESSAGE_TYPE, length + FLAGS_LENGTH);
        if (index < 0) {
            return false;
        }
        memory.set(ValueLayout.JAVA_INT_UNALIGNED, index, flags);
        MemorySegment.copy(frame, offset, memory, index + FLAGS_LENGTH, length);
        ring.commit(index);
        return true;
    }

    /** The shard this inbox belongs to; set once by {@link StackShards}, before any post. */
    void owner(NetStack stack) {
        this.owner = stack;
    }

    /**
     * From a poster's thread, after a {@link #post} that succeeded: a frame is work queued for the owner, so it wakes
     * the owner if it sleeps in {@link NetStack#awaitWork} (whose last look before sleeping includes this inbox,
     * through {@link ShardFilterLink#awaitFrames}). Returns whether it woke it (one system call; none while the owner
     * runs).
     */
    boolean wakeOwnerIfAsleep() {
        final NetStack stack = owner;
        return stack != null && stack.wakeIfAsleep();
    }

    /** On this shard's thread: hands up to {@code maxFrames} posted frames to {@code handler}; returns how many. */
    int drain(FrameHandler handler, int maxFrames) {
        this.handler = handler;
        return ring.read(deliver, maxFrames);
    }

    /** Whether a frame is waiting (any thread; a hint, exact only on this shard's thread). */
    boolean hasFrames() {
        return ring.size() > 0;
    }

    private void deliver(int type, MutableDirectBuffer buffer, int index, int length) {
        handler.onFrame(memory, index + FLAGS_LENGTH, length - FLAGS_LENGTH,
            memory.get(ValueLayout.JAVA_INT_UNALIGNED, index));
    }
}
