package dev.tern.ipv4;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.TokenBucket;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * ICMP for IPv4 (RFC 792 with RFC 1122 §3.2.2): answers echo requests of any size, hands echo replies to the
 * {@link EchoListener}, passes errors about our datagrams to the transport that sent them, learns path MTUs from
 * "fragmentation needed" (RFC 1191), and sends errors on behalf of the other layers.
 *
 * <p>Errors we send obey RFC 1122 §3.2.2 and RFC 1812 §4.3.2.7: never about an ICMP error, a datagram sent to a
 * broadcast or multicast address, a non-first fragment, or a datagram whose source is not a unicast address; they
 * quote as much of the datagram as fits in 576 bytes (RFC 1812 §4.3.2.3) and are rate limited twice (RFC 1812
 * §4.3.2.8): first per peer ({@link IcmpPeerRateLimiter}, Linux's icmp_ratelimit), so that one peer cannot spend the
 * allowance of all, then globally ({@link TokenBucket}, Linux's icmp_msgs_per_sec). Each limit counts what it
 * suppressed under its own name. Every error type Tern sends (unreachable, time exceeded, parameter problem) is
 * limited, as Linux's default icmp_ratemask does; echo replies are not errors and are not limited.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class IcmpLayer implements IpProtocolHandler {
    /** An ICMP error datagram is at most this long (RFC 1812 §4.3.2.3). */
    static final int MAX_ERROR_DATAGRAM = 576;
    /** RFC 1191 §7 plateau table, for "fragmentation needed" from routers that do not say the MTU. */
    private static final int[] MTU_PLATEAUS = {32000, 17914, 8166, 4352, 2002, 1492, 1006, 508, 296, 68};

    private final Ipv4Layer ipv4;
    private final Ipv4Config config;
    private final IcmpHeader rx = new IcmpHeader();
    private final IcmpHeader tx = new IcmpHeader();
    private final Ipv4Header quoted = new Ipv4Header();
    private final TokenBucket errorLimiter;
    private final IcmpPeerRateLimiter peerLimiter;
    private EchoListener echoListener;

    private final AtomicCounter rxMessages;
    private final AtomicCounter rxBadChecksum;
    private final AtomicCounter rxTooShort;
    private final AtomicCounter rxEchoRequests;
    private final AtomicCounter rxEchoReplies;
    private final AtomicCounter rxErrors;
    private final AtomicCounter rxErrorsIgnored;
    private final AtomicCounter rxOther;
    private final AtomicCounter echoBroadcastIgnored;
    private final AtomicCounter txEchoReplies;
    private final AtomicCounter txEchoRequests;
    private final AtomicCounter txErrors;
    private final AtomicCounter txErrorsRateLimited;
    private final AtomicCounter txErrorsRateLimitedPeer;
    private final AtomicCounter txErrorsSuppressed;
    private final AtomicCounter pathMtuLearned;

    IcmpLayer(Ipv4Layer ipv4, Ipv4Config config, CountersFile counters) {
        this.ipv4 = ipv4;
        this.config = config;
        this.errorLimiter = new TokenBucket(config.icmpErrorsPerSecond(), config.icmpErrorBurst());
        this.peerLimiter = new IcmpPeerRateLimiter(config.icmpPeerIntervalNs(), config.icmpPeerBurst(),
            config.icmpPeerEntries());
        this.rxMessages = counters.counter("icmp.rx.messages");
        this.rxBadChecksum = counters.counter("icmp.drop.bad_checksum");
        this.rxTooShort = counters.counter("icmp.drop.too_short");
        this.rxEchoRequests = counters.counter("icmp.rx.echo_requests");
        this.rxEchoReplies = counters.counter("icmp.rx.echo_replies");
        this.rxErrors = counters.counter("icmp.rx.errors");
        this.rxErrorsIgnored = counters.counter("icmp.drop.error_not_ours");
        this.rxOther = counters.counter("icmp.rx.other_types");
        this.echoBroadcastIgnored = counters.counter("icmp.drop.echo_to_broadcast");
        this.txEchoReplies = counters.counter("icmp.tx.echo_replies");
        this.txEchoRequests = counters.counter("icmp.tx.echo_requests");
        this.txErrors = counters.counter("icmp.tx.errors");
        this.txErrorsRateLimited = counters.counter("icmp.tx.errors_rate_limited");
        this.txErrorsRateLimitedPeer = counters.counter("icmp.tx.errors_rate_limited_peer");
        this.txErrorsSuppressed = counters.counter("icmp.tx.errors_suppressed");
        this.pathMtuLearned = counters.counter("icmp.rx.path_mtu_updates");
    }

    /** Who receives echo replies and errors about our echo requests. */
    public void echoListener(EchoListener listener) {
        this.echoListener = listener;
    }

    // ---------------------------------------------------------------------------------------------- receive

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        rxMessages.incrementRelease();
        rx.wrap(segment, offset, length);
        if (!rx.complete()) {
            rxTooShort.incrementRelease();
            return;
        }
        if (!InternetChecksum.verifies(InternetChecksum.add(0, segment, offset, length))) {
            rxBadChecksum.incrementRelease();
            return;
        }
        final int type = rx.type();
        switch (type) {
            case IcmpHeader.ECHO_REQUEST -> echoRequest(packet, segment, offset, length, nowNs);
            case IcmpHeader.ECHO_REPLY -> {
                rxEchoReplies.incrementRelease();
                if (echoListener != null) {
                    echoListener.onEchoReply(packet.source(), rx.identifier(), rx.sequence(), packet.ttl(), segment,
                        offset + IcmpHeader.LENGTH, length - IcmpHeader.LENGTH, nowNs);
                }
            }
            case IcmpHeader.DESTINATION_UNREACHABLE, IcmpHeader.TIME_EXCEEDED, IcmpHeader.PARAMETER_PROBLEM ->
                error(packet, type, segment, offset, length, nowNs);
            default -> rxOther.incrementRelease(); // source quench (RFC 6633), redirects, timestamps: ignored
        }
    }

    /** Echo request: the reply carries the same identifier, sequence and data (RFC 792), fragmented if need be. */
    private void echoRequest(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        rxEchoRequests.incrementRelease();
        if (packet.kind() != Ipv4Packet.UNICAST && config.echoIgnoreBroadcasts()) {
            echoBroadcastIgnored.incrementRelease();
            return;
        }
        if (ipv4.begin(packet.destination(), packet.source(), IpProtocol.ICMP, length, 0, packet.tos(), false, nowNs)
            != Ipv4Layer.OK) {
            return;
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        MemorySegment.copy(segment, offset, out, at, length);
        tx.wrap(out, at, length).type(IcmpHeader.ECHO_REPLY);
        // Only the type changed (8 -> 0): RFC 1624 incremental update of the request's checksum.
        tx.checksum(InternetChecksum.update16(rx.checksum(), IcmpHeader.ECHO_REQUEST << 8, IcmpHeader.ECHO_REPLY << 8));
        ipv4.commit();
        txEchoReplies.incrementRelease();
    }

    /** An error about a datagram we sent: learn from it, then tell the transport that sent the datagram. */
    private void error(Ipv4Packet packet, int type, MemorySegment segment, long offset, int length, long nowNs) {
        rxErrors.incrementRelease();
        final int quotedLength = length - IcmpHeader.LENGTH;
        final long quotedOffset = offset + IcmpHeader.LENGTH;
        quoted.wrap(segment, quotedOffset, quotedLength);
        if (quotedLength < Ipv4Header.MIN_LENGTH || quoted.version() != 4) {
            rxErrorsIgnored.incrementRelease();
            return;
        }
        final int headerLength = quoted.headerLength();
        if (headerLength < Ipv4Header.MIN_LENGTH || quotedLength < headerLength + 8
            || quoted.source() != ipv4.address().address()) {
            rxErrorsIgnored.incrementRelease();
            return;
        }
        final int code = rx.code();
        final int originalDestination = quoted.destination();
        int nextHopMtu = 0;
        if (type == IcmpHeader.DESTINATION_UNREACHABLE && code == IcmpHeader.FRAGMENTATION_NEEDED) {
            nextHopMtu = pathMtuFrom(rx.nextHopMtu(), quoted.totalLength());
            if (quoted.protocol() != IpProtocol.TCP) {
                // UDP and ICMP keep no state to check the quote against; TCP checks the quoted sequence number
                // first and calls learnPathMtu only if it is in flight (RFC 5927 §7.3, as Linux's tcp_v4_err).
                learnPathMtu(originalDestination, nextHopMtu, nowNs);
            }
        }
        ipv4.deliverError(type, code, nextHopMtu, packet.source(), quoted.source(), originalDestination,
            quoted.protocol(), segment, quotedOffset + headerLength, quotedLength - headerLength, nowNs);
    }

    /**
     * Lowers the path MTU to {@code destination} (RFC 1191) after a "fragmentation needed" about it was accepted: at
     * once for UDP and ICMP, by TCP after it found the quoted segment in flight (a forged or stale error must not
     * shrink the path for every later connection, RFC 5927 §7.2-7.3). Counted as {@code icmp.rx.path_mtu_updates}.
     */
    public void learnPathMtu(int destination, int pathMtu, long nowNs) {
        ipv4.pathMtus().reduce(destination, pathMtu, nowNs);
        pathMtuLearned.incrementRelease();
    }

    /** RFC 1191 §5/§7: use the router's MTU if given, else the plateau below the datagram's size; never below the floor. */
    private int pathMtuFrom(int reported, int originalTotalLength) {
        int mtu = reported;
        if (mtu == 0 || mtu >= originalTotalLength) {
            mtu = MTU_PLATEAUS[MTU_PLATEAUS.length - 1];
            for (int plateau : MTU_PLATEAUS) {
                if (plateau < originalTotalLength) {
                    mtu = plateau;
                    break;
                }
            }
        }
        return Math.max(mtu, config.minPathMtu());
    }

    /** Errors about our own ICMP datagrams: only echo requests matter (ping). */
    @Override
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                            int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
        if (echoListener == null || length < IcmpHeader.LENGTH) {
            return;
        }
        rx.wrap(segment, offset, length);
        if (rx.type() == IcmpHeader.ECHO_REQUEST) {
            echoListener.onEchoError(reporter, type, code, originalDestination, rx.identifier(), rx.sequence(), nowNs);
        }
    }

    // ---------------------------------------------------------------------------------------------- send

    /**
     * Sends an echo request carrying {@code length} bytes of {@code data}; returns {@link Ipv4Layer#OK} or the
     * IPv4 layer's error code.
     */
    public int sendEchoRequest(int destination, int identifier, int sequence, MemorySegment data, long offset,
                               int length, long nowNs) {
        final int result = ipv4.begin(0, destination, IpProtocol.ICMP, IcmpHeader.LENGTH + length, 0, 0, false, nowNs);
        if (result != Ipv4Layer.OK) {
            return result;
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        MemorySegment.copy(data, offset, out, at + IcmpHeader.LENGTH, length);
        tx.wrap(out, at, IcmpHeader.LENGTH + length).type(IcmpHeader.ECHO_REQUEST).code(0).checksum(0)
            .identifier(identifier).sequence(sequence);
        tx.checksum(InternetChecksum.compute(out, at, IcmpHeader.LENGTH + length));
        ipv4.commit();
        txEchoRequests.incrementRelease();
        return Ipv4Layer.OK;
    }

    /** Sends an error about a datagram we received (protocol or port unreachable, for instance). */
    public void sendError(int type, int code, Ipv4Packet original, long nowNs) {
        sendError(type, code, 0, original.source(), original.destination(), original.kind(),
            original.headerSegment(), original.headerOffset(), original.totalLength(), nowNs);
    }

    /**
     * Sends an error about the datagram at {@code offset} (its IP header first, {@code length} bytes available),
     * unless the rules above forbid it or the rate limit is spent.
     */
    void sendError(int type, int code, int restOfHeader, int originalSource, int originalDestination, int kind,
                   MemorySegment segment, long offset, int length, long nowNs) {
        if (!errorAllowed(originalSource, kind, segment, offset, length)) {
            txErrorsSuppressed.incrementRelease();
            return;
        }
        // Per peer first: a peer whose own bucket is empty must not also drain the global one.
        if (!peerLimiter.tryAcquire(originalSource, nowNs)) {
            txErrorsRateLimitedPeer.incrementRelease();
            return;
        }
        if (!errorLimiter.tryAcquire(nowNs)) {
            txErrorsRateLimited.incrementRelease();
            return;
        }
        final int quote = Math.min(length, MAX_ERROR_DATAGRAM - Ipv4Header.MIN_LENGTH - IcmpHeader.LENGTH);
        if (ipv4.begin(0, originalSource, IpProtocol.ICMP, IcmpHeader.LENGTH + quote, 0, 0, false, nowNs)
            != Ipv4Layer.OK) {
            return;
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        MemorySegment.copy(segment, offset, out, at + IcmpHeader.LENGTH, quote);
        tx.wrap(out, at, IcmpHeader.LENGTH + quote).type(type).code(code).checksum(0).restOfHeader(restOfHeader);
        tx.checksum(InternetChecksum.compute(out, at, IcmpHeader.LENGTH + quote));
        ipv4.commit();
        txErrors.incrementRelease();
    }

    private boolean errorAllowed(int originalSource, int kind, MemorySegment segment, long offset, int length) {
        if (kind != Ipv4Packet.UNICAST || originalSource == 0 || originalSource == Ipv4Address.LIMITED_BROADCAST
            || Ipv4Address.isMulticast(originalSource) || Ipv4Address.isReserved(originalSource)
            || originalSource == ipv4.address().broadcast()) {
            return false;
        }
        quoted.wrap(segment, offset, length);
        if (length < Ipv4Header.MIN_LENGTH || (quoted.flagsAndFragmentOffset() & 0x1FFF) != 0) {
            return false; // never about a non-first fragment
        }
        final int headerLength = quoted.headerLength();
        if (quoted.protocol() == IpProtocol.ICMP) {
            if (length < headerLength + 1) {
                return false;
            }
            final int quotedType = dev.tern.core.memory.BigEndian.u8(segment, offset + headerLength);
            return !IcmpHeader.isError(quotedType);
        }
        return true;
    }
}
