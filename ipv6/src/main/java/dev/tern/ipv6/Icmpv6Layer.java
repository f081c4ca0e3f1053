package dev.tern.ipv6;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.TokenBucket;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;

/**
 * ICMPv6 (RFC 4443): answers echo requests, hands neighbour-discovery messages to {@link NeighbourDiscovery},
 * counts the errors it receives, and sends errors for the IPv6 layer.
 *
 * <p>Errors we send follow §2.4: never about an ICMPv6 error or a redirect, a packet from the unspecified or a
 * multicast address, or a packet sent to a multicast group (save a parameter problem for an option whose type asks
 * for one even then, §2.4(e.3)); they quote as much of the packet as keeps the error within the minimum MTU, 1280
 * bytes (§2.4(c)), and are rate limited by a token bucket (§2.4(f)).
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Icmpv6Layer {
    /** Who receives echo replies (a pinger). */
    @FunctionalInterface
    public interface EchoListener {
        void onEchoReply(long sourceHigh, long sourceLow, int identifier, int sequence, int hopLimit, MemorySegment data,
                         long offset, int length, long nowNs);
    }

    private final Ipv6Layer ipv6;
    private final Ipv6Counters counters;
    private final TokenBucket errorLimiter;
    private final Icmpv6Header rx = new Icmpv6Header();
    private final Icmpv6Header tx = new Icmpv6Header();
    private NeighbourDiscovery discovery;
    private MldListener mld;
    private RouterDiscovery routers;
    private EchoListener echoListener;

    Icmpv6Layer(Ipv6Layer ipv6, Ipv6Config config, Ipv6Counters counters) {
        this.ipv6 = ipv6;
        this.counters = counters;
        this.errorLimiter = new TokenBucket(config.errorsPerSecond(), config.errorBurst());
    }

    void discovery(NeighbourDiscovery discovery, MldListener mld, RouterDiscovery routers) {
        this.discovery = discovery;
        this.mld = mld;
        this.routers = routers;
    }

    public void echoListener(EchoListener listener) {
        this.echoListener = listener;
    }

    /**
     * Sends an echo request (RFC 4443 §4.1) with {@code length} bytes of {@code data}, fragmented if need be; returns
     * {@link Ipv6Layer#OK} or the layer's error.
     */
    public int sendEchoRequest(long dh, long dl, int identifier, int sequence, MemorySegment data, long offset,
                               int length, long nowNs) {
        final int total = Icmpv6Header.LENGTH + length;
        final int opened = ipv6.begin(dh, dl, NextHeader.ICMPV6, total, ipv6.hopLimit(), 0, nowNs);
        if (opened != Ipv6Layer.OK) {
            return opened;
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset();
        MemorySegment.copy(data, offset, out, at + Icmpv6Header.LENGTH, length);
        tx.wrap(out, at, total).type(Icmpv6Header.ECHO_REQUEST).code(0).checksum(0)
            .word((identifier << 16) | (sequence & 0xffff));
        tx.checksum(InternetChecksum.finish(InternetChecksum.add(ipv6.pseudoHeaderSum(), out, at, total)));
        ipv6.commit();
        counters.icmpTxEchoRequests.incrementRelease();
        return Ipv6Layer.OK;
    }

    /** An ICMPv6 message for us at {@code offset}; {@code ipOffset} and {@code packetLength} are its IPv6 packet's. */
    void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long ipOffset, int packetLength,
                  long nowNs) {
        counters.icmpRxMessages.incrementRelease();
        rx.wrap(segment, offset, length);
        if (!rx.complete()) {
            counters.icmpDropTooShort.incrementRelease();
            return;
        }
        if (!InternetChecksum.verifies(InternetChecksum.add(
            Ipv6Header.pseudoHeaderSum(segment, ipOffset, length, NextHeader.ICMPV6), segment, offset, length))) {
            counters.icmpDropBadChecksum.incrementRelease();
            return;
        }
        final int type = rx.type();
        if (packet.fragmented && type >= Icmpv6Header.ROUTER_SOLICITATION && type <= Icmpv6Header.REDIRECT) {
            counters.ndDropFragmented.incrementRelease(); // RFC 6980 §5: ND in fragments is an attack
            return;
        }
        switch (type) {
            case Icmpv6Header.ECHO_REQUEST -> echoRequest(packet, segment, offset, length, nowNs);
            case Icmpv6Header.ECHO_REPLY -> {
                counters.icmpRxEchoReplies.incrementRelease();
                if (echoListener != null) {
                    echoListener.onEchoReply(packet.sourceHigh, packet.sourceLow, rx.identifier(), rx.sequence(),
                        packet.hopLimit, segment, offset + Icmpv6Header.LENGTH, length - Icmpv6Header.LENGTH, nowNs);
                }
            }
            case Icmpv6Header.NEIGHBOR_SOLICITATION -> discovery.onSolicitation(packet, rx, segment, offset, length,
                nowNs);
            case Icmpv6Header.NEIGHBOR_ADVERTISEMENT -> discovery.onAdvertisement(packet, rx, segment, offset, length,
                nowNs);
            case Icmpv6Header.ROUTER_SOLICITATION -> counters.ndRxRouterMessagesIgnored.incrementRelease(); // a host
            case Icmpv6Header.ROUTER_ADVERTISEMENT -> routers.onAdvertisement(packet, rx, segment, offset, length, nowNs);
            case Icmpv6Header.REDIRECT -> counters.ndRxRedirectsIgnored.incrementRelease();
            case MldListener.QUERY -> mld.onQuery(packet, segment, offset, length, nowNs);
            case MldListener.V1_REPORT, MldListener.V2_REPORT, MldListener.V1_DONE ->
                counters.mldRxReportsIgnored.incrementRelease(); // a host suppresses nothing in MLDv2 (§6.4)
            case Icmpv6Header.PACKET_TOO_BIG -> packetTooBig(segment, offset, length, nowNs);
            default -> {
                if (Icmpv6Header.isError(rx.type())) {
                    counters.icmpRxErrors.incrementRelease();
                    tellTransport(type, rx.code(), segment, offset, length, nowNs);
                } else {
                    counters.icmpRxOther.incrementRelease(); // §2.4(b): unknown informational messages are dropped
                }
            }
        }
    }

    /**
     * A packet too big (§3.2) about a packet of ours: the path MTU towards its destination falls to the MTU given,
     * never below 1280 (RFC 8201 §4), for the next packets and their fragments. One that quotes a packet not from
     * an address of ours is ignored (counted).
     */
    private void packetTooBig(MemorySegment segment, long offset, int length, long nowNs) {
        counters.icmpRxPacketTooBig.incrementRelease();
        final long quoted = offset + Icmpv6Header.LENGTH;
        if (length < Icmpv6Header.LENGTH + Ipv6Header.LENGTH
            || !ipv6.addresses().isOurs(BigEndian.i64(segment, quoted + Ipv6Header.SOURCE_OFFSET),
                BigEndian.i64(segment, quoted + Ipv6Header.SOURCE_OFFSET + 8))) {
            counters.icmpDropErrorNotOurs.incrementRelease();
            return;
        }
        final long mtu = rx.word() & 0xffff_ffffL;
        ipv6.pathMtuDecreased(BigEndian.i64(segment, quoted + Ipv6Header.DESTINATION_OFFSET),
            BigEndian.i64(segment, quoted + Ipv6Header.DESTINATION_OFFSET + 8),
            (int) Math.max(Ipv6Header.MIN_MTU, Math.min(mtu, 65535)), nowNs);
        // TCP sizes its segments again from the lowered path MTU (RFC 8201 §5.2: packetization layers are told).
        tellTransport(Icmpv6Header.PACKET_TOO_BIG, 0, segment, offset, length, nowNs);
    }

    /**
     * Hands an error about a packet of ours to the transport that sent it (§2.4(d)), when the quoted packet's fixed
     * header names that transport directly; one quoting extension headers is only counted.
     */
    private void tellTransport(int type, int code, MemorySegment segment, long offset, int length, long nowNs) {
        final long quoted = offset + Icmpv6Header.LENGTH;
        final int quotedLength = length - Icmpv6Header.LENGTH - Ipv6Header.LENGTH;
        if (quotedLength < 8 || !ipv6.addresses().isOurs(BigEndian.i64(segment, quoted + Ipv6Header.SOURCE_OFFSET),
            BigEndian.i64(segment, quoted + Ipv6Header.SOURCE_OFFSET + 8))) {
            counters.icmpDropErrorNotOurs.incrementRelease();
            return;
        }
        final Ipv6ProtocolHandler handler = ipv6.handler(BigEndian.u8(segment, quoted + 6));
        if (handler != null) {
            handler.onIcmpError(type, code, BigEndian.i64(segment, quoted + Ipv6Header.SOURCE_OFFSET),
                BigEndian.i64(segment, quoted + Ipv6Header.SOURCE_OFFSET + 8),
                BigEndian.i64(segment, quoted + Ipv6Header.DESTINATION_OFFSET),
                BigEndian.i64(segment, quoted + Ipv6Header.DESTINATION_OFFSET + 8), segment,
                quoted + Ipv6Header.LENGTH, quotedLength, nowNs);
        }
    }

    /**
     * A port unreachable (§3.1, code 4) about the packet being handed up, which no socket takes; never for a packet
     * sent to a group (§2.4(e.3)).
     */
    public void portUnreachable(Ipv6Packet packet, MemorySegment segment, long nowNs) {
        if (packet.multicastDestination) {
            counters.icmpTxErrorsSuppressed.incrementRelease();
            return;
        }
        sendError(Icmpv6Header.DESTINATION_UNREACHABLE, Icmpv6Header.PORT_UNREACHABLE, 0, segment,
            packet.headerOffset, packet.packetLength, packet, nowNs);
    }

    /** §4.2: the reply carries the request's identifier, sequence and data, from the address it was sent to. */
    private void echoRequest(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        counters.icmpRxEchoRequests.incrementRelease();
        if (packet.sourceHigh == 0 && packet.sourceLow == 0) {
            return; // no one to answer
        }
        final int opened = packet.multicastDestination
            ? ipv6.begin(packet.sourceHigh, packet.sourceLow, NextHeader.ICMPV6, length, ipv6.hopLimit(), 0, nowNs)
            : ipv6.beginFrom(packet.destinationHigh, packet.destinationLow, packet.sourceHigh, packet.sourceLow,
                NextHeader.ICMPV6, length, ipv6.hopLimit(), 0, nowNs);
        if (opened != Ipv6Layer.OK) {
            return;
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset();
        MemorySegment.copy(segment, offset, out, at, length);
        tx.wrap(out, at, length).type(Icmpv6Header.ECHO_REPLY).code(0).checksum(0);
        tx.checksum(InternetChecksum.finish(InternetChecksum.add(ipv6.pseudoHeaderSum(), out, at, length)));
        ipv6.commit();
        counters.icmpTxEchoReplies.incrementRelease();
    }

    /** A parameter problem (§3.4) about the packet at {@code ipOffset}, unless §2.4(e) forbids one. */
    void parameterProblem(int code, int pointer, MemorySegment segment, long ipOffset, int packetLength,
                          Ipv6Packet packet, long nowNs) {
        if (packet.multicastDestination) {
            counters.icmpTxErrorsSuppressed.incrementRelease();
            return;
        }
        parameterProblemAlways(code, pointer, segment, ipOffset, packetLength, packet, nowNs);
    }

    /** A parameter problem even for a multicast destination (§2.4(e.3): an option type whose top bits are 10). */
    void parameterProblemAlways(int code, int pointer, MemorySegment segment, long ipOffset, int packetLength,
                                Ipv6Packet packet, long nowNs) {
        sendError(Icmpv6Header.PARAMETER_PROBLEM, code, pointer, segment, ipOffset, packetLength, packet, nowNs);
    }

    /** A time exceeded (§3.3) about the packet at {@code ipOffset} (a reassembly that timed out). */
    void timeExceeded(int code, MemorySegment segment, long ipOffset, int packetLength, Ipv6Packet packet, long nowNs) {
        sendError(Icmpv6Header.TIME_EXCEEDED, code, 0, segment, ipOffset, packetLength, packet, nowNs);
    }

    private void sendError(int type, int code, int word, MemorySegment segment, long ipOffset, int packetLength,
                           Ipv6Packet packet, long nowNs) {
        if ((packet.sourceHigh == 0 && packet.sourceLow == 0) || Ipv6Address.isMulticast(packet.sourceHigh)
            || quotesAnError(segment, ipOffset, packetLength)) {
            counters.icmpTxErrorsSuppressed.incrementRelease();
            return;
        }
        if (!errorLimiter.tryAcquire(nowNs)) {
            counters.icmpTxErrorsRateLimited.incrementRelease();
            return;
        }
        final int quoted = Math.min(packetLength, Ipv6Header.MIN_MTU - Ipv6Header.LENGTH - Icmpv6Header.LENGTH);
        final int length = Icmpv6Header.LENGTH + quoted;
        if (ipv6.begin(packet.sourceHigh, packet.sourceLow, NextHeader.ICMPV6, length, ipv6.hopLimit(), 0, nowNs)
            != Ipv6Layer.OK) {
            return;
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset();
        MemorySegment.copy(segment, ipOffset, out, at + Icmpv6Header.LENGTH, quoted);
        tx.wrap(out, at, length).type(type).code(code).checksum(0).word(word);
        tx.checksum(InternetChecksum.finish(InternetChecksum.add(ipv6.pseudoHeaderSum(), out, at, length)));
        ipv6.commit();
        counters.icmpTxErrors.incrementRelease();
    }

    /** §2.4(e.1), (e.2): the packet is itself an ICMPv6 error or a redirect (right after the fixed header). */
    private static boolean quotesAnError(MemorySegment segment, long ipOffset, int packetLength) {
        if (BigEndian.u8(segment, ipOffset + 6) != NextHeader.ICMPV6 || packetLength <= Ipv6Header.LENGTH) {
            return false;
        }
        final int type = BigEndian.u8(segment, ipOffset + Ipv6Header.LENGTH);
        return Icmpv6Header.isError(type) || type == Icmpv6Header.REDIRECT;
    }
}
