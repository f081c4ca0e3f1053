package dev.tern.stack;

import dev.tern.arp.ArpLayer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;

/**
 * The ARP news one shard of a sharded stack brings to another: shard 0 receives every ARP packet (the link steers
 * everything but TCP and UDP to it), and posts what each taught its neighbour cache here; the other shard learns the
 * same at its next poll ({@link ArpLayer#learn}), so its own resolutions complete and its entries stay fresh although
 * the replies to its requests reach shard 0. See docs/DESIGN.md, "Shards".
 *
 * <p>One writer (shard 0's thread) and one reader (the receiving shard's thread). A record is 16 bytes:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     sender IPv4 address                       |  SENDER_IP_OFFSET 0
 *  +---------------------------------------------------------------+
 *  |            flags: bit 0 addressed to us, bit 1 a reply         |  FLAGS_OFFSET 4
 *  +---------------------------------------------------------------+
 *  |                  sender MAC (48 bits, in a long)              |  SENDER_MAC_OFFSET 8
 *  +                                                               +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 * Allocates nothing per record. A full relay drops the record, counted by the writer
 * ({@code shard.neighbour_relay_full} on shard 0): the receiving shard then resolves that neighbour by its own
 * requests again.
 */
final class NeighbourRelay {
    static final int SENDER_IP_OFFSET = 0;
    static final int FLAGS_OFFSET = 4;
    static final int SENDER_MAC_OFFSET = 8;
    static final int RECORD_LENGTH = 16;
    private static final int MESSAGE_TYPE = 1;
    private static final int FLAG_FOR_US = 1;
    private static final int FLAG_REPLY = 2;
    private static final int CAPACITY = 64 * 1024;

    private final OneToOneRingBuffer ring;
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(RECORD_LENGTH));
    private ArpLayer arp;
    private long nowNs;
    private final org.agrona.concurrent.MessageHandler learn = (type, buffer, index, length) ->
        arp.learn(buffer.getInt(index + SENDER_IP_OFFSET), buffer.getLong(index + SENDER_MAC_OFFSET),
            (buffer.getInt(index + FLAGS_OFFSET) & FLAG_FOR_US) != 0,
            (buffer.getInt(index + FLAGS_OFFSET) & FLAG_REPLY) != 0, nowNs);

    NeighbourRelay() {
        this.ring = new OneToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(CAPACITY + RingBufferDescriptor.TRAILER_LENGTH)));
    }

    /** The receiving shard's ARP layer (set once, before the shards run). */
    void receiver(ArpLayer arp) {
        this.arp = arp;
    }

    /** On the writing shard's thread; false when the relay is full (the writer counts it). */
    boolean post(int senderIp, long senderMac, boolean addressedToUs, boolean isReply) {
        scratch.putInt(SENDER_IP_OFFSET, senderIp);
        scratch.putInt(FLAGS_OFFSET, (addressedToUs ? FLAG_FOR_US : 0) | (isReply ? FLAG_REPLY : 0));
        scratch.putLong(SENDER_MAC_OFFSET, senderMac);
        return ring.write(MESSAGE_TYPE, scratch, 0, RECORD_LENGTH);
    }

    /** On the receiving shard's thread: learns every posted record; returns how many. */
    int drain(long nowNs) {
        this.nowNs = nowNs;
        return ring.read(learn);
    }
}
