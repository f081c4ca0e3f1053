package dev.tern.tcp;

import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpOptionFields;

import java.lang.foreign.MemorySegment;

/**
 * The segment being processed (RFC 9293 §3.3.1 "current segment variables": SEG.SEQ, SEG.ACK, SEG.LEN, SEG.WND),
 * with its addresses and parsed options. One mutable instance per shard, filled per received segment; the payload
 * it points at is valid only until the receive callback returns.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class TcpSegment {
    /** IPv4 addresses, or over IPv6 the keyed folds of the whole addresses below (IsnGenerator.fold). */
    int sourceAddress;
    int destinationAddress;
    /** Whether the segment came over IPv6; then its addresses whole. */
    boolean ipv6;
    long sourceHigh;
    long sourceLow;
    long destinationHigh;
    long destinationLow;
    int sourcePort;
    int destinationPort;
    int seq;
    int ack;
    int flags;
    int window;
    MemorySegment payloadSegment;
    long payloadOffset;
    int payloadLength;
    /** The IP header's ECN field (RFC 3168 §5, {@link Ecn#CE} and the others). */
    int ipEcn;
    final TcpOptionFields options = new TcpOptionFields();

    /** Fills the fields from a checked header; returns false when its options were malformed (the rest is usable). */
    boolean read(TcpHeader header, int source, int destination, MemorySegment segment, long offset, int length) {
        ipv6 = false;
        sourceAddress = source;
        destinationAddress = destination;
        sourcePort = header.sourcePort();
        destinationPort = header.destinationPort();
        seq = header.sequence();
        ack = header.acknowledgment();
        flags = header.flags();
        window = header.window();
        final int dataOffset = header.dataOffset();
        payloadSegment = segment;
        payloadOffset = offset + dataOffset;
        payloadLength = length - dataOffset;
        if (dataOffset == TcpHeader.MIN_LENGTH) {
            options.clear();
            return true;
        }
        return options.parse(header);
    }

    /** As {@link #read}, for a segment that came over IPv6 between the given addresses (folded into the ints). */
    boolean read6(TcpHeader header, long sh, long sl, long dh, long dl, int sourceFold, int destinationFold,
                  MemorySegment segment, long offset, int length) {
        final boolean optionsRead = read(header, sourceFold, destinationFold, segment, offset, length);
        ipv6 = true;
        sourceHigh = sh;
        sourceLow = sl;
        destinationHigh = dh;
        destinationLow = dl;
        return optionsRead;
    }

    boolean has(int flag) {
        return (flags & flag) != 0;
    }

    /** SEG.LEN: payload plus one for SYN and one for FIN (RFC 9293 §3.4). */
    int sequenceLength() {
        return payloadLength + (flags & TcpFlags.SYN) / TcpFlags.SYN + (flags & TcpFlags.FIN);
    }

    public int seq() {
        return seq;
    }

    public int ack() {
        return ack;
    }

    public int flags() {
        return flags;
    }

    public int window() {
        return window;
    }

    public int payloadLength() {
        return payloadLength;
    }

    public TcpOptionFields options() {
        return options;
    }
}
