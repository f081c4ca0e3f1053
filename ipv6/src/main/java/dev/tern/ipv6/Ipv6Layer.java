package dev.tern.ipv6;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;

/**
 * IPv6 for a host (RFC 8200): checks each packet once, keeps only what is addressed to us (our addresses in use,
 * all-nodes, our solicited-node groups), walks the extension headers and hands the upper-layer payload to ICMPv6 or
 * to a registered protocol; on the way out it picks the source address, resolves the next hop through neighbour
 * discovery and writes the header.
 *
 * <p>Extension headers (RFC 8200 §4): hop-by-hop options only first (§4.3), options processed by the action their
 * type's top bits ask for (§4.2); a routing header with segments left is refused with a parameter problem, as a
 * host that forwards nothing must (§4.4; RFC 5095 for type 0); fragments are counted and dropped, reassembly is not
 * built yet (docs/STATUS.md); an unknown next header gets a parameter problem pointing at it (§4).
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
public final class Ipv6Layer implements EthernetLayer.Handler {
    public static final int OK = 0;
    public static final int ERR_NO_ROUTE = -1;
    public static final int ERR_NO_BUFFER = -2;
    public static final int ERR_MESSAGE_TOO_LONG = -3;
    public static final int ERR_NO_SOURCE = -4;

    private static final int MODE_NONE = 0;
    private static final int MODE_FRAME = 1;
    private static final int MODE_PENDING = 2;
    /** Option types (RFC 8200 §4.2). */
    private static final int OPTION_PAD1 = 0;
    private static final int OPTION_PADN = 1;

    private final EthernetLayer ethernet;
    private final Ipv6Config config;
    private final Ipv6Counters counters;
    private final Ipv6Addresses addresses;
    private final Ipv6NeighbourCache neighbours;
    private final NeighbourDiscovery discovery;
    private final Icmpv6Layer icmp;
    private final MldListener mld;
    private final Ipv6Header rx = new Ipv6Header();
    private final Ipv6Header tx = new Ipv6Header();
    private final Ipv6Packet packet = new Ipv6Packet();
    private final Ipv6ProtocolHandler[] handlers = new Ipv6ProtocolHandler[256];

    private int mode = MODE_NONE;
    private MemorySegment outSegment;
    private long outHeaderOffset;
    private int outPayloadLength;
    private int outPendingBuffer;
    private long outNextHopHigh;
    private long outNextHopLow;

    public Ipv6Layer(EthernetLayer ethernet, Timers timers, Ipv6Config config, CountersFile counterFile) {
        this.ethernet = ethernet;
        this.config = config;
        this.counters = new Ipv6Counters(counterFile);
        this.addresses = new Ipv6Addresses(ethernet.mac(), config.addresses(), config.dadTransmits());
        this.icmp = new Icmpv6Layer(this, config, counters);
        this.mld = new MldListener(this, addresses, timers, ethernet.mac(), counters);
        this.discovery = new NeighbourDiscovery(this, ethernet, timers, config, addresses, counters, mld);
        this.neighbours = discovery.neighbours();
        icmp.discovery(discovery, mld);
        ethernet.register(EtherType.IPV6, this);
        ethernet.onInternalError(this::abort);
    }

    /**
     * Joins the groups, reports them (MLD) and starts duplicate address detection (RFC 4862 §5.4.2: the report
     * first); call once the stack runs.
     */
    public void start(long nowNs) {
        discovery.start(nowNs);
    }

    public Ipv6Addresses addresses() {
        return addresses;
    }

    public Ipv6NeighbourCache neighbours() {
        return neighbours;
    }

    public Icmpv6Layer icmp() {
        return icmp;
    }

    public EthernetLayer ethernet() {
        return ethernet;
    }

    /** Registers the protocol for {@code nextHeader} (UDP, TCP). Cold path. */
    public void register(int nextHeader, Ipv6ProtocolHandler handler) {
        handlers[nextHeader] = handler;
    }

    // ---------------------------------------------------------------------------------------------- receive

    @Override
    public void onPacket(MemorySegment segment, long offset, int length, int rxFlags, long sourceMac,
                         long destinationMac, long nowNs) {
        counters.rxPackets.incrementRelease();
        rx.wrap(segment, offset, length);
        final int reason = rx.check();
        if (reason != Ipv6Header.OK) {
            counters.headerDrops[reason].incrementRelease();
            return;
        }
        final long sh = rx.sourceHigh();
        final long sl = rx.sourceLow();
        final long dh = rx.destinationHigh();
        final long dl = rx.destinationLow();
        if (Ipv6Address.isMulticast(sh) || Ipv6Address.isLoopback(sh, sl) || addresses.isOurs(sh, sl)) {
            // RFC 4291 §2.7: never a multicast source; ::1 never on a wire (§2.5.3); an address of ours in use is a
            // loop or a spoof. A tentative one passes: another holder of it answering our DAD is what DAD looks for.
            counters.dropBadSource.incrementRelease();
            return;
        }
        final boolean multicast = Ipv6Address.isMulticast(dh);
        if (multicast ? !addresses.listensTo(dh, dl) : !addresses.isOurs(dh, dl)) {
            counters.dropNotOurs.incrementRelease();
            return;
        }
        packet.sourceHigh = sh;
        packet.sourceLow = sl;
        packet.destinationHigh = dh;
        packet.destinationLow = dl;
        packet.hopLimit = rx.hopLimit();
        packet.trafficClass = rx.trafficClass();
        packet.multicastDestination = multicast;
        deliver(segment, offset, Ipv6Header.LENGTH + rx.payloadLength(), nowNs);
    }

    /** Walks the extension headers from the fixed header at {@code offset} and hands the payload up. */
    private void deliver(MemorySegment segment, long offset, int packetLength, long nowNs) {
        final long end = offset + packetLength;
        long at = offset + Ipv6Header.LENGTH;
        long nextHeaderField = offset + 6; // where the Next Header that names the header at `at` is
        int next = BigEndian.u8(segment, nextHeaderField);
        while (true) {
            switch (next) {
                case NextHeader.ICMPV6 -> {
                    packet.nextHeader = next;
                    icmp.onPacket(packet, segment, at, (int) (end - at), offset, packetLength, nowNs);
                    return;
                }
                case NextHeader.NO_NEXT_HEADER -> {
                    counters.rxNoNextHeader.incrementRelease(); // §4.7: nothing follows; whatever is there is ignored
                    return;
                }
                case NextHeader.HOP_BY_HOP, NextHeader.DESTINATION_OPTIONS, NextHeader.ROUTING, NextHeader.FRAGMENT -> {
                    if (end - at < 8) {
                        counters.dropBadExtension.incrementRelease();
                        return;
                    }
                    final int headerLength = next == NextHeader.FRAGMENT ? 8 : (BigEndian.u8(segment, at + 1) + 1) * 8;
                    if (at + headerLength > end) {
                        counters.dropBadExtension.incrementRelease();
                        icmp.parameterProblem(Icmpv6Header.ERRONEOUS_HEADER_FIELD, (int) (at + 1 - offset), segment,
                            offset, packetLength, packet, nowNs);
                        return;
                    }
                    if (next == NextHeader.HOP_BY_HOP && at != offset + Ipv6Header.LENGTH) {
                        // §4.3: hop-by-hop options only right after the fixed header.
                        counters.dropUnknownNextHeader.incrementRelease();
                        icmp.parameterProblem(Icmpv6Header.UNRECOGNIZED_NEXT_HEADER, (int) (nextHeaderField - offset),
                            segment, offset, packetLength, packet, nowNs);
                        return;
                    }
                    if (next == NextHeader.FRAGMENT) {
                        counters.dropFragment.incrementRelease();
                        return;
                    }
                    if (next == NextHeader.ROUTING && BigEndian.u8(segment, at + 3) != 0) {
                        // §4.4 (RFC 5095 §3 for type 0): segments left, and a host forwards nothing.
                        counters.dropRoutingHeader.incrementRelease();
                        icmp.parameterProblem(Icmpv6Header.ERRONEOUS_HEADER_FIELD, (int) (at + 2 - offset), segment,
                            offset, packetLength, packet, nowNs);
                        return;
                    }
                    if (next != NextHeader.ROUTING && !options(segment, at + 2, at + headerLength, offset, packetLength,
                        nowNs)) {
                        return;
                    }
                    nextHeaderField = at;
                    next = BigEndian.u8(segment, at);
                    at += headerLength;
                }
                default -> {
                    final Ipv6ProtocolHandler handler = handlers[next];
                    if (handler == null) {
                        counters.dropUnknownNextHeader.incrementRelease();
                        icmp.parameterProblem(Icmpv6Header.UNRECOGNIZED_NEXT_HEADER, (int) (nextHeaderField - offset),
                            segment, offset, packetLength, packet, nowNs);
                        return;
                    }
                    packet.nextHeader = next;
                    handler.onPacket(packet, segment, at, (int) (end - at), nowNs);
                    return;
                }
            }
        }
    }

    /**
     * The TLV options of a hop-by-hop or destination options header (RFC 8200 §4.2), from {@code at} to
     * {@code limit}; false when the packet is to be discarded (counted, and answered as the option's type asks).
     */
    private boolean options(MemorySegment segment, long at, long limit, long offset, int packetLength, long nowNs) {
        while (at < limit) {
            final int type = BigEndian.u8(segment, at);
            if (type == OPTION_PAD1) {
                at++;
                continue;
            }
            if (at + 2 > limit || at + 2 + BigEndian.u8(segment, at + 1) > limit) {
                counters.dropBadExtension.incrementRelease();
                icmp.parameterProblem(Icmpv6Header.ERRONEOUS_HEADER_FIELD, (int) (at - offset), segment, offset,
                    packetLength, packet, nowNs);
                return false;
            }
            if (type != OPTION_PADN) {
                // Tern knows no option but padding: the top two bits of the type say what to do (§4.2).
                switch (type >>> 6) {
                    case 0 -> { }
                    case 1 -> {
                        counters.dropOption.incrementRelease();
                        return false;
                    }
                    case 2 -> {
                        counters.dropOption.incrementRelease();
                        icmp.parameterProblemAlways(Icmpv6Header.UNRECOGNIZED_OPTION, (int) (at - offset), segment,
                            offset, packetLength, packet, nowNs);
                        return false;
                    }
                    default -> {
                        counters.dropOption.incrementRelease();
                        icmp.parameterProblem(Icmpv6Header.UNRECOGNIZED_OPTION, (int) (at - offset), segment,
                            offset, packetLength, packet, nowNs);
                        return false;
                    }
                }
            }
            at += 2 + BigEndian.u8(segment, at + 1);
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------- send

    /**
     * Opens a packet to ({@code dh}, {@code dl}) from the source RFC 6724 picks; on {@link #OK} write
     * {@code payloadLength} bytes at {@link #payloadOffset()} and {@link #commit()}.
     */
    public int begin(long dh, long dl, int nextHeader, int payloadLength, int hopLimit, int trafficClass, long nowNs) {
        final int source = addresses.sourceFor(dh, dl);
        if (source < 0) {
            counters.txNoSource.incrementRelease();
            return ERR_NO_SOURCE;
        }
        return beginFrom(addresses.high(source), addresses.low(source), dh, dl, nextHeader, payloadLength, hopLimit,
            trafficClass, nowNs);
    }

    /** Like {@link #begin}, from the given source (the unspecified address for DAD, RFC 4862 §5.4.2). */
    public int beginFrom(long sh, long sl, long dh, long dl, int nextHeader, int payloadLength, int hopLimit,
                         int trafficClass, long nowNs) {
        if (mode != MODE_NONE) {
            throw new IllegalStateException("an IPv6 packet is already open");
        }
        final int total = Ipv6Header.LENGTH + payloadLength;
        if (total > ethernet.mtu()) {
            return ERR_MESSAGE_TOO_LONG;
        }
        final long mac;
        if (Ipv6Address.isMulticast(dh)) {
            mac = Ipv6Address.multicastMac(dl);
        } else if (addresses.onLink(dh, dl)) {
            mac = neighbours.resolve(dh, dl, nowNs);
        } else {
            counters.txNoRoute.incrementRelease(); // no default router yet: only on-link destinations
            return ERR_NO_ROUTE;
        }
        if (mac == Ipv6NeighbourCache.UNRESOLVED) {
            final int buffer = neighbours.queueBegin();
            if (buffer < 0) {
                counters.txNoBuffer.incrementRelease();
                return ERR_NO_BUFFER;
            }
            mode = MODE_PENDING;
            outPendingBuffer = buffer;
            outSegment = neighbours.pendingSegment();
            outHeaderOffset = neighbours.pendingOffset(buffer);
            outNextHopHigh = dh;
            outNextHopLow = dl;
        } else {
            if (!ethernet.begin(mac, EtherType.IPV6)) {
                counters.txNoBuffer.incrementRelease();
                return ERR_NO_BUFFER;
            }
            mode = MODE_FRAME;
            outSegment = ethernet.frame().segment();
            outHeaderOffset = ethernet.payloadOffset();
        }
        outPayloadLength = payloadLength;
        tx.wrap(outSegment, outHeaderOffset, Ipv6Header.LENGTH)
            .write(trafficClass, 0, payloadLength, nextHeader, hopLimit, sh, sl, dh, dl);
        return OK;
    }

    /** Memory of the open packet. */
    public MemorySegment segment() {
        return outSegment;
    }

    /** Where the open packet's payload starts in {@link #segment()}. */
    public long payloadOffset() {
        return outHeaderOffset + Ipv6Header.LENGTH;
    }

    /** The upper-layer checksum's pseudo-header sum of the open packet (RFC 8200 §8.1), not yet folded. */
    public long pseudoHeaderSum() {
        return pseudoHeaderSum(outPayloadLength, BigEndian.u8(outSegment, outHeaderOffset + 6));
    }

    /** As {@link #pseudoHeaderSum()}, for an upper layer behind extension headers: its own length and protocol. */
    public long pseudoHeaderSum(int upperLength, int upperProtocol) {
        long sum = InternetChecksum.add(0, outSegment, outHeaderOffset + Ipv6Header.SOURCE_OFFSET, 32);
        sum = InternetChecksum.add32(sum, upperLength);
        return InternetChecksum.add32(sum, upperProtocol);
    }

    /** The hop limit our packets carry. */
    public int hopLimit() {
        return config.hopLimit();
    }

    public void commit() {
        switch (mode) {
            case MODE_FRAME -> ethernet.send(Ipv6Header.LENGTH + outPayloadLength);
            case MODE_PENDING -> neighbours.queueCommit(outNextHopHigh, outNextHopLow, outPendingBuffer,
                Ipv6Header.LENGTH + outPayloadLength);
            default -> throw new IllegalStateException("no IPv6 packet open");
        }
        counters.txPackets.incrementRelease();
        mode = MODE_NONE;
    }

    public void abort() {
        switch (mode) {
            case MODE_FRAME -> ethernet.abort();
            case MODE_PENDING -> neighbours.queueAbort(outPendingBuffer);
            default -> { }
        }
        mode = MODE_NONE;
    }

    public void close() {
        neighbours.close();
    }
}
