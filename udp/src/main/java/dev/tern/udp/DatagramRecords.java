package dev.tern.udp;

import dev.tern.core.io.ByteRing;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Datagrams as records in a socket's {@link ByteRing}, the same format both ways: the stack writes received
 * datagrams into the receive ring, the application writes datagrams to send into the send ring.
 *
 * <pre>
 *   0               4               8       10      12              16
 *   +---------------+---------------+-------+-------+---------------+------------------------------+
 *   | payload length| address       | port  | flags | reserved      | payload, padded to 8 bytes   |
 *   +---------------+---------------+-------+-------+---------------+------------------------------+
 *   address/port: the source of a received datagram; the destination of one to send (0 = the connected peer)
 *   flags (receive): how the datagram was addressed (0 unicast, 1 broadcast, 2 multicast)
 *   flags (send): {@link #SEND_BROADCAST}, {@link #SEND_MULTICAST_LOOP}; reserved (send): the multicast TTL
 *   Send options travel with each datagram, so changing an option never affects datagrams already queued.
 *
 *   An IPv6 record ({@link #IPV6} in flags, either way) has 16 more header bytes, the 128-bit address, and its
 *   address field is 0:
 *   16                              24                              32
 *   +-------------------------------+-------------------------------+------------------------------+
 *   | address, high 64 bits         | address, low 64 bits          | payload, padded to 8 bytes   |
 *   +-------------------------------+-------------------------------+------------------------------+
 * </pre>
 *
 * <p>Records are 8-byte aligned and may wrap around the end of the ring. Fields are in native order: they never
 * leave the process. An instance holds a 16-byte scratch header; use one per thread (one for the stack, one per
 * socket on the application side).
 */
public final class DatagramRecords {
    public static final int HEADER = 16;
    /** The header of an IPv6 record: {@link #HEADER} and the 128-bit address. */
    public static final int HEADER_IPV6 = 32;
    static final int LENGTH_OFFSET = 0;
    static final int ADDRESS_OFFSET = 4;
    static final int PORT_OFFSET = 8;
    static final int FLAGS_OFFSET = 10;
    static final int ADDRESS_HIGH_OFFSET = 16;
    static final int ADDRESS_LOW_OFFSET = 24;

    /** Flag, both ways: the record's address is IPv6, in the 16 header bytes after the first 16. */
    public static final int IPV6 = 1 << 12;

    /** Send flag: the socket may send to broadcast addresses (SO_BROADCAST). */
    public static final int SEND_BROADCAST = 1 << 8;
    /** Send flag: local members of the group get a copy (IP_MULTICAST_LOOP). */
    public static final int SEND_MULTICAST_LOOP = 1 << 9;
    static final int TTL_OFFSET = 12;

    private final MemorySegment header = Arena.ofAuto().allocate(HEADER_IPV6, 8);

    /** Bytes an IPv4 record of {@code payloadLength} takes in a ring. */
    public static int recordLength(int payloadLength) {
        return HEADER + ((payloadLength + 7) & ~7);
    }

    /** Bytes an IPv6 record of {@code payloadLength} takes in a ring. */
    public static int recordLength6(int payloadLength) {
        return HEADER_IPV6 + ((payloadLength + 7) & ~7);
    }

    /** Appends a record if it fits; returns false (nothing written) when it does not. */
    public boolean offer(ByteRing ring, int address, int port, int flags, MemorySegment payload, long offset, int length) {
        return offer(ring, address, port, flags, 0, payload, offset, length);
    }

    /** Appends a record carrying {@code ttl} (the multicast TTL of a datagram to send). */
    public boolean offer(ByteRing ring, int address, int port, int flags, int ttl, MemorySegment payload, long offset,
                         int length) {
        final int record = recordLength(length);
        if (ring.freeSpace() < record) {
            return false;
        }
        final long position = ring.producerPosition();
        header.set(ValueLayout.JAVA_INT, LENGTH_OFFSET, length);
        header.set(ValueLayout.JAVA_INT, ADDRESS_OFFSET, address);
        header.set(ValueLayout.JAVA_SHORT, PORT_OFFSET, (short) port);
        header.set(ValueLayout.JAVA_SHORT, FLAGS_OFFSET, (short) flags);
        header.set(ValueLayout.JAVA_INT, TTL_OFFSET, ttl);
        ring.put(position, header, 0, HEADER);
        ring.put(position + HEADER, payload, offset, length);
        ring.publish(position + record);
        return true;
    }

    /**
     * Appends an IPv6 record from or to ({@code high}, {@code low}) if it fits ({@link #IPV6} is added to
     * {@code flags}; for a datagram to send, the address (0, 0) means the connected peer, and {@code ttl} is the
     * multicast hop limit); returns false (nothing written) when it does not.
     */
    public boolean offer6(ByteRing ring, long high, long low, int port, int flags, int ttl, MemorySegment payload,
                          long offset, int length) {
        final int record = recordLength6(length);
        if (ring.freeSpace() < record) {
            return false;
        }
        final long position = ring.producerPosition();
        header.set(ValueLayout.JAVA_INT, LENGTH_OFFSET, length);
        header.set(ValueLayout.JAVA_INT, ADDRESS_OFFSET, 0);
        header.set(ValueLayout.JAVA_SHORT, PORT_OFFSET, (short) port);
        header.set(ValueLayout.JAVA_SHORT, FLAGS_OFFSET, (short) (flags | IPV6));
        header.set(ValueLayout.JAVA_INT, TTL_OFFSET, ttl);
        header.set(ValueLayout.JAVA_LONG, ADDRESS_HIGH_OFFSET, high);
        header.set(ValueLayout.JAVA_LONG, ADDRESS_LOW_OFFSET, low);
        ring.put(position, header, 0, HEADER_IPV6);
        ring.put(position + HEADER_IPV6, payload, offset, length);
        ring.publish(position + record);
        return true;
    }

    /** Reads the header of the oldest record into this instance; returns false when the ring holds none. */
    public boolean peek(ByteRing ring) {
        if (ring.available() < HEADER) {
            return false;
        }
        ring.peek(ring.consumerPosition(), header, 0, HEADER);
        if (ipv6()) {
            ring.peek(ring.consumerPosition() + HEADER, header, HEADER, HEADER_IPV6 - HEADER);
        }
        return true;
    }

    /** The peeked record's address is IPv6 ({@link #addressHigh}, {@link #addressLow}). */
    public boolean ipv6() {
        return (flags() & IPV6) != 0;
    }

    /** The peeked record's header length: {@link #HEADER}, or {@link #HEADER_IPV6} for an IPv6 record. */
    public int headerLength() {
        return ipv6() ? HEADER_IPV6 : HEADER;
    }

    /** High 64 bits of the peeked IPv6 record's address. */
    public long addressHigh() {
        return header.get(ValueLayout.JAVA_LONG, ADDRESS_HIGH_OFFSET);
    }

    /** Low 64 bits of the peeked IPv6 record's address. */
    public long addressLow() {
        return header.get(ValueLayout.JAVA_LONG, ADDRESS_LOW_OFFSET);
    }

    /** Payload length of the record last {@link #peek}ed. */
    public int length() {
        return header.get(ValueLayout.JAVA_INT, LENGTH_OFFSET);
    }

    public int address() {
        return header.get(ValueLayout.JAVA_INT, ADDRESS_OFFSET);
    }

    public int port() {
        return Short.toUnsignedInt(header.get(ValueLayout.JAVA_SHORT, PORT_OFFSET));
    }

    public int flags() {
        return Short.toUnsignedInt(header.get(ValueLayout.JAVA_SHORT, FLAGS_OFFSET));
    }

    /** How the peeked received datagram was addressed: 0 unicast, 1 broadcast, 2 multicast. */
    public int kind() {
        return flags() & 0xff;
    }

    public int ttl() {
        return header.get(ValueLayout.JAVA_INT, TTL_OFFSET);
    }

    /** Copies up to {@code capacity} bytes of the peeked record's payload to {@code destination}; returns how many. */
    public int copyPayload(ByteRing ring, MemorySegment destination, long offset, int capacity) {
        final int count = Math.min(capacity, length());
        ring.peek(ring.consumerPosition() + headerLength(), destination, offset, count);
        return count;
    }

    /** Consumes the peeked record. */
    public void consume(ByteRing ring) {
        ring.consume(ipv6() ? recordLength6(length()) : recordLength(length()));
    }
}
