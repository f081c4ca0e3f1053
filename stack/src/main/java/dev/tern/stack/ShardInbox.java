package dev.tern.stack;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
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
    /** The owner's link, which a poster wakes when the owner sleeps on it; null: never woken (tests). */
    private Link ownerLink;
    /** True while the owner sleeps in its link's {@code awaitFrames} (set by the owner, read by posters). */
    private volatile boolean ownerAsleep;

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

    /** The owner's link, whose sleeping thread {@link #wakeOwnerIfAsleep} wakes; set once, before any post. */
    void ownerLink(Link link) {
        this.ownerLink = link;
    }

    /**
     * On the owner's thread: sleeps in its link's {@code awaitFrames} unless a frame is posted already, with the flag
     * up that makes posters wake it ({@link #wakeOwnerIfAsleep}). The flag goes up before the last look at the ring,
     * and a poster looks at the flag after its commit, so a frame posted meanwhile is either seen here or wakes the
     * sleep (both sides' accesses are ordered by the flag's volatile write and the poster's full fence).
     */
    boolean awaitFramesOrPosts(Link link, int timeoutMs) {
        ownerAsleep = true;
        try {
            return hasFrames() || link.awaitFrames(timeoutMs);
        } finally {
            ownerAsleep = false;
        }
    }

    /**
     * From a poster's thread, after a {@link #post} that succeeded: wakes the owner if it sleeps on its link, so a
     * handed-over frame waits for no timeout. Returns whether it woke it (one system call; none while the owner runs).
     */
    boolean wakeOwnerIfAsleep() {
        VarHandle.fullFence(); // the commit before the flag's read: see awaitFramesOrPosts
        final Link link = ownerLink;
        return ownerAsleep && link != null && link.wakeAwaitingThread();
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
