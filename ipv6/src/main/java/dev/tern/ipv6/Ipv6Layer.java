package dev.tern.ipv6;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.wire.EthernetHeader;
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
 * host that forwards nothing must (§4.4; RFC 5095 for type 0); fragments are reassembled ({@link Ipv6Reassembler});
 * an unknown next header gets a parameter problem pointing at it (§4).
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
    /** Too long for the link: written into the staging buffer, sent as fragments on commit (RFC 8200 §4.5). */
    private static final int MODE_STAGING = 3;
    private static final int FRAGMENT_HEADER_LENGTH = 8;
    /** RFC 8201 §4: a learnt path MTU is tried again upwards after at least 5 minutes; Linux waits 10. */
    private static final long PATH_MTU_TIMEOUT_NS = 600_000_000_000L;
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
    private final RouterDiscovery routers;
    private final Ipv6Header rx = new Ipv6Header();
    private final Ipv6Header tx = new Ipv6Header();
    private final Ipv6Packet packet = new Ipv6Packet();
    private final Ipv6Packet timedOut = new Ipv6Packet();
    private final Ipv6Reassembler reassembler;
    private final Ipv6ProtocolHandler[] handlers = new Ipv6ProtocolHandler[256];

    private int mode = MODE_NONE;
    private MemorySegment outSegment;
    private long outHeaderOffset;
    private int outPayloadLength;
    private int outPendingBuffer;
    private long outNextHopHigh;
    private long outNextHopLow;
    private long outMac;
    private long outNowNs;
    /** One packet of the largest size, for those sent in fragments. */
    private final dev.tern.core.memory.FramePool staging;
    private final long identificationKey0;
    private final long identificationKey1;
    private int identificationCounter;
    /** Path MTUs from packet-too-big messages (RFC 8201), keyed by a keyed hash of the destination. */
    private final dev.tern.core.net.PathMtuCache pathMtus = new dev.tern.core.net.PathMtuCache(256, PATH_MTU_TIMEOUT_NS);
    private int outMtu;

    /**
     * The secret key of opaque interface identifiers (RFC 7217 §5): the host's {@code /etc/machine-id}, set once at
     * installation as §5 asks, so the address is the same at every start; 16 random bytes where it cannot be read
     * (the address then changes from one start to the next).
     */
    private static byte[] secretKey() {
        try {
            final byte[] id = java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/etc/machine-id"));
            if (id.length >= 16) {
                return id;
            }
        } catch (java.io.IOException | SecurityException e) {
            // falls back to a random key below
        }
        final byte[] key = new byte[16];
        new java.security.SecureRandom().nextBytes(key);
        return key;
    }

    /**
     * IPv6 on {@code ethernet}'s link. Its link-local address is formed from the MAC (EUI-64), or, where the link
     * shares its interface with the kernel ({@link dev.tern.ethernet.link.Link#sharesInterfaceWithKernel}), is
     * opaque (RFC 7217), since the kernel forms the EUI-64 one for itself.
     *
     * @throws IllegalArgumentException for SLAAC on a link that shares its interface with the kernel
     */
    public Ipv6Layer(EthernetLayer ethernet, Timers timers, Ipv6Config config, CountersFile counterFile) {
        this(ethernet, timers, config, counterFile, false);
    }

    /**
     * As {@link #Ipv6Layer(EthernetLayer, Timers, Ipv6Config, CountersFile)}; with {@code speaksThroughAnother} the layer
     * shares its addresses and MAC with another stack on the link that speaks for them (shard 0 of a sharded stack):
     * it sends no duplicate address detection, answers no solicitation, reports no MLD group and solicits no router,
     * and learns neighbours and routers from the messages that stack passes on. It still resolves its own neighbours
     * (the advertisements come back through the other stack) and runs DAD's timers, so its addresses become usable
     * when the other's do and fail as the other's fail, both seeing the same messages (docs/DESIGN.md, "Shards").
     */
    public Ipv6Layer(EthernetLayer ethernet, Timers timers, Ipv6Config config, CountersFile counterFile,
                     boolean speaksThroughAnother) {
        this.ethernet = ethernet;
        this.config = config;
        this.counters = new Ipv6Counters(counterFile);
        final boolean sharedInterface = ethernet.link().sharesInterfaceWithKernel();
        if (sharedInterface && config.slaac()) {
            throw new IllegalArgumentException("IPv6 address autoconfiguration (--ip6 auto) is not offered on "
                + ethernet.link().name() + ", which shares its interface and MAC with the kernel: the kernel keeps the"
                + " router advertisements (AF_XDP) and forms its own addresses from that MAC; give static addresses"
                + " (--ip6 ADDR/N) or use afpacket");
        }
        this.addresses = new Ipv6Addresses(sharedInterface
            ? Ipv6Address.opaqueInterfaceIdentifier(Ipv6Address.LINK_LOCAL_HIGH, ethernet.mac(), 0, secretKey())
            : Ipv6Address.interfaceIdentifier(ethernet.mac()), config.addresses(), config.dadTransmits());
        this.icmp = new Icmpv6Layer(this, config, counters);
        this.reassembler = new Ipv6Reassembler(timers, counterFile);
        this.staging = dev.tern.core.memory.FramePool.allocate(1, Ipv6Header.LENGTH + 65535);
        final java.security.SecureRandom random = new java.security.SecureRandom();
        this.identificationKey0 = random.nextLong();
        this.identificationKey1 = random.nextLong();
        this.identificationCounter = random.nextInt();
        reassembler.slots().onTimeout(this::reassemblyTimedOut);
        this.mld = new MldListener(this, addresses, timers, ethernet.mac(), counters, speaksThroughAnother);
        this.discovery = new NeighbourDiscovery(this, ethernet, timers, config, addresses, counters, mld,
            speaksThroughAnother);
        this.neighbours = discovery.neighbours();
        this.routers = new RouterDiscovery(this, addresses, neighbours, discovery, timers, ethernet.mac(), config,
            ethernet.mtu(), counters, !speaksThroughAnother && config.solicitRouters());
        icmp.discovery(discovery, mld, routers);
        ethernet.register(EtherType.IPV6, this);
        ethernet.onInternalError(this::abort);
    }

    /**
     * Joins the groups, reports them (MLD) and starts duplicate address detection (RFC 4862 §5.4.2: the report
     * first); call once the stack runs.
     */
    public void start(long nowNs) {
        discovery.start(nowNs);
        routers.start(nowNs);
    }

    /**
     * An application joins the multicast group ({@code high}, {@code low}) for any source: the link hears its MAC
     * (RFC 2464 §7) and MLD reports it (RFC 3810 §6.1). Reference-counted with {@link #leaveGroup}. False when
     * {@value MldListener#MAX_APPLICATION_GROUPS} groups are joined already. Cold path.
     *
     * @throws IllegalArgumentException when the address is not multicast
     */
    public boolean joinGroup(long high, long low, long nowNs) {
        if (!Ipv6Address.isMulticast(high)) {
            throw new IllegalArgumentException(new Ipv6Address(high, low) + " is not a multicast group");
        }
        if (!mld.join(high, low, nowNs)) {
            return false;
        }
        ethernet.addMulticast(Ipv6Address.multicastMac(low));
        return true;
    }

    /** One membership of the group ended ({@link #joinGroup}); MLD reports it left with the last. Cold path. */
    public void leaveGroup(long high, long low, long nowNs) {
        if (!mld.member(high, low)) {
            return;
        }
        mld.leave(high, low, nowNs);
        ethernet.removeMulticast(Ipv6Address.multicastMac(low));
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

    /** The protocol registered for {@code nextHeader}, or null. */
    Ipv6ProtocolHandler handler(int nextHeader) {
        return handlers[nextHeader & 0xff];
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
        if (multicast ? !addresses.listensTo(dh, dl) && !mld.member(dh, dl) : !addresses.isOurs(dh, dl)) {
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
        packet.fragmented = false;
        packet.rxFlags = rxFlags;
        deliver(segment, offset, Ipv6Header.LENGTH + rx.payloadLength(), nowNs);
    }

    /** Walks the extension headers from the fixed header at {@code offset} and hands the payload up. */
    private void deliver(MemorySegment segment, long offset, int packetLength, long nowNs) {
        packet.headerOffset = offset;
        packet.packetLength = packetLength;
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
                        if (packet.fragmented) {
                            counters.dropBadExtension.incrementRelease(); // a fragment header once only (§4.1)
                            return;
                        }
                        final int field = BigEndian.u16(segment, at + 2);
                        if ((field & 0xfff9) == 0) {
                            // An atomic fragment (offset 0, no more): processed in isolation (RFC 6946, RFC 8200
                            // §4.5), never reassembled with others.
                            counters.rxAtomicFragments.incrementRelease();
                            packet.fragmented = true;
                            packet.rxFlags = 0; // a fragment's upper layer is checked here, never by the link
                            nextHeaderField = at;
                            next = BigEndian.u8(segment, at);
                            at += 8;
                            continue;
                        }
                        fragment(segment, offset, packetLength, nextHeaderField, at, end, field, nowNs);
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
     * A fragment (RFC 8200 §4.5): its length checked (parameter problems pointing at the payload length, or at the
     * fragment offset, as §4.5 says), the first one's header chain checked (RFC 7112), then kept; the packet it
     * completes is delivered as if it had come whole.
     */
    private void fragment(MemorySegment segment, long offset, int packetLength, long nextHeaderField, long at,
                          long end, int field, long nowNs) {
        final int start = field & 0xfff8;
        final boolean more = (field & 1) != 0;
        final int length = (int) (end - at - 8);
        if (!reassembler.acceptable(start, length, more)) {
            if (more && length > 0 && (length & 7) != 0) {
                icmp.parameterProblem(Icmpv6Header.ERRONEOUS_HEADER_FIELD, 4, segment, offset, packetLength, packet,
                    nowNs);
            } else if (length > 0) {
                icmp.parameterProblem(Icmpv6Header.ERRONEOUS_HEADER_FIELD, (int) (at + 2 - offset), segment, offset,
                    packetLength, packet, nowNs);
            }
            return;
        }
        if (start == 0 && !Ipv6Reassembler.wholeChain(segment, BigEndian.u8(segment, at), at + 8, end)) {
            counters.dropIncompleteChain.incrementRelease();
            icmp.parameterProblem(Icmpv6Header.INCOMPLETE_HEADER_CHAIN, 0, segment, offset, packetLength, packet,
                nowNs);
            return;
        }
        final int slot = reassembler.accept(segment, offset, nextHeaderField, at, end, nowNs);
        if (slot < 0) {
            return;
        }
        packet.fragmented = true;
        packet.rxFlags = 0; // a fragment's upper layer is checked here, never by the link
        deliver(reassembler.segment(), reassembler.packetOffset(slot), reassembler.packetLength(slot), nowNs);
        reassembler.release(slot);
    }

    /** RFC 8200 §4.5: time exceeded (code 1) for a packet whose first fragment came and that never completed. */
    private void reassemblyTimedOut(int slot, long nowNs) {
        final dev.tern.core.memory.Reassembly slots = reassembler.slots();
        if (slots.headerLength(slot) == 0 || Ipv6Address.isMulticast(reassembler.destinationHigh(slot))) {
            return;
        }
        timedOut.sourceHigh = reassembler.sourceHigh(slot);
        timedOut.sourceLow = reassembler.sourceLow(slot);
        timedOut.destinationHigh = reassembler.destinationHigh(slot);
        timedOut.destinationLow = reassembler.destinationLow(slot);
        timedOut.multicastDestination = false;
        icmp.timeExceeded(Icmpv6Header.REASSEMBLY_TIME_EXCEEDED, slots.segment(), slots.datagramOffset(slot),
            slots.headerLength(slot) + slots.contiguousFromStart(slot), timedOut, nowNs);
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
        return beginFrom(sh, sl, dh, dl, nextHeader, payloadLength, hopLimit, trafficClass, 0, nowNs);
    }

    /** {@link #beginFrom}, the packet carrying {@code flowLabel} (RFC 6437: 20 bits a flow keeps; 0 for none). */
    public int beginFrom(long sh, long sl, long dh, long dl, int nextHeader, int payloadLength, int hopLimit,
                         int trafficClass, int flowLabel, long nowNs) {
        if (mode != MODE_NONE) {
            throw new IllegalStateException("an IPv6 packet is already open");
        }
        final int total = Ipv6Header.LENGTH + payloadLength;
        if (payloadLength > 65535) {
            return ERR_MESSAGE_TOO_LONG;
        }
        final long mac;
        long hopHigh = dh;
        long hopLow = dl;
        if (Ipv6Address.isMulticast(dh)) {
            mac = Ipv6Address.multicastMac(dl);
        } else {
            if (!nextHop(dh, dl, nowNs)) {
                return ERR_NO_ROUTE;
            }
            hopHigh = nextHopHigh;
            hopLow = nextHopLow;
            mac = neighbours.resolve(hopHigh, hopLow, nowNs);
        }
        outMtu = pathMtu(dh, dl, nowNs);
        if (total > outMtu) {
            mode = MODE_STAGING;
            outMac = mac;
            outNowNs = nowNs;
            outNextHopHigh = hopHigh;
            outNextHopLow = hopLow;
            outSegment = staging.slab();
            outHeaderOffset = staging.offset(0);
        } else if (mac == Ipv6NeighbourCache.UNRESOLVED) {
            final int buffer = neighbours.queueBegin();
            if (buffer < 0) {
                counters.txNoBuffer.incrementRelease();
                return ERR_NO_BUFFER;
            }
            mode = MODE_PENDING;
            outPendingBuffer = buffer;
            outSegment = neighbours.pendingSegment();
            outHeaderOffset = neighbours.pendingOffset(buffer);
            outNextHopHigh = hopHigh;
            outNextHopLow = hopLow;
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
            .write(trafficClass, flowLabel, payloadLength, nextHeader, hopLimit, sh, sl, dh, dl);
        return OK;
    }

    /** The next hop {@link #nextHop} chose: the destination itself on link, else a default router. */
    private long nextHopHigh;
    private long nextHopLow;

    /**
     * The next hop towards unicast ({@code dh}, {@code dl}) into {@link #nextHopHigh}/{@link #nextHopLow}: the
     * destination on link, else a default router (RFC 4861 §5.2); false, counted, when there is none.
     */
    private boolean nextHop(long dh, long dl, long nowNs) {
        if (addresses.onLink(dh, dl) || routers.onLink(dh, dl, nowNs)) {
            nextHopHigh = dh;
            nextHopLow = dl;
            return true;
        }
        final int router = routers.defaultRouter(nowNs);
        if (router < 0) {
            counters.txNoRoute.incrementRelease();
            return false;
        }
        nextHopHigh = routers.routerHigh(router);
        nextHopLow = routers.routerLow(router);
        return true;
    }

    /**
     * True when the link splits large TCP segments itself (TSO/GSO, its TCPv6 kind) and completes their checksums: a
     * transport may then send up to 64 KiB at once with {@link #beginSegmentedFrom}.
     */
    public boolean segmentationOffload() {
        final int needed = Offloads.TX_TCP_SEGMENTATION | Offloads.TX_L4_CHECKSUM;
        return (ethernet.link().offloads() & needed) == needed;
    }

    /**
     * Opens a packet larger than the path MTU that the link cuts into segments of {@code segmentSize} payload bytes
     * (TSO), as IPv4's {@code beginSegmented}: straight into a link frame only. When the link cannot segment, the
     * destination is a group, its next hop is not resolved or the frame would not fit, returns
     * {@link #ERR_MESSAGE_TOO_LONG} and the transport sends MSS-sized packets instead. The transport must ask for the
     * checksum ({@link #requestL4Checksum}).
     */
    public int beginSegmentedFrom(long sh, long sl, long dh, long dl, int nextHeader, int payloadLength, int hopLimit,
                                  int trafficClass, int flowLabel, int segmentSize, long nowNs) {
        if (mode != MODE_NONE) {
            throw new IllegalStateException("an IPv6 packet is already open");
        }
        if (!segmentationOffload() || payloadLength > 65535 || Ipv6Address.isMulticast(dh)) {
            return ERR_MESSAGE_TOO_LONG;
        }
        if (!nextHop(dh, dl, nowNs)) {
            return ERR_NO_ROUTE;
        }
        final long mac = neighbours.resolve(nextHopHigh, nextHopLow, nowNs);
        if (mac == Ipv6NeighbourCache.UNRESOLVED) {
            return ERR_MESSAGE_TOO_LONG;
        }
        if (!ethernet.begin(mac, EtherType.IPV6)) {
            counters.txNoBuffer.incrementRelease();
            return ERR_NO_BUFFER;
        }
        if (ethernet.payloadCapacity() < Ipv6Header.LENGTH + payloadLength) {
            ethernet.abort();
            return ERR_MESSAGE_TOO_LONG;
        }
        mode = MODE_FRAME;
        outSegment = ethernet.frame().segment();
        outHeaderOffset = ethernet.payloadOffset();
        outPayloadLength = payloadLength;
        ethernet.frame().requestSegmentation(segmentSize);
        tx.wrap(outSegment, outHeaderOffset, Ipv6Header.LENGTH)
            .write(trafficClass, flowLabel, payloadLength, nextHeader, hopLimit, sh, sl, dh, dl);
        return OK;
    }

    /**
     * True when the open packet goes straight into a link frame whose link completes upper-layer checksums: the
     * transport then writes only the pseudo-header sum and calls {@link #requestL4Checksum}.
     */
    public boolean l4ChecksumOffload() {
        return mode == MODE_FRAME && (ethernet.link().offloads() & Offloads.TX_L4_CHECKSUM) != 0;
    }

    /** Asks the link to complete the checksum at {@code fieldOffset} within the upper-layer header (no extensions). */
    public void requestL4Checksum(int fieldOffset) {
        ethernet.frame().requestL4Checksum(EthernetHeader.LENGTH + Ipv6Header.LENGTH, fieldOffset);
    }

    /**
     * Whether a packet to ({@code h}, {@code l}) could leave: on-link, or off-link with a default router (what a TCP
     * listener asks before it keeps state for a SYN).
     */
    public boolean routable(long h, long l, long nowNs) {
        return addresses.onLink(h, l) || routers.onLink(h, l, nowNs) || routers.defaultRouter(nowNs) >= 0;
    }

    private long destinationKey(long h, long l) {
        return dev.tern.core.hash.SipHash.hash(identificationKey1, identificationKey0, h, l);
    }

    /** A packet too big told us the path to ({@code h}, {@code l}) carries at most {@code mtu} bytes (RFC 8201 §4). */
    void pathMtuDecreased(long h, long l, int mtu, long nowNs) {
        if (mtu < routers.linkMtu()) {
            pathMtus.reduce(destinationKey(h, l), mtu, nowNs);
            counters.pathMtuUpdates.incrementRelease();
        }
    }

    /** The MTU towards ({@code h}, {@code l}): the link's, or less as a packet too big said (what TCP's MSS follows). */
    public int pathMtu(long h, long l, long nowNs) {
        return pathMtus.size() == 0 ? routers.linkMtu() : pathMtus.mtu(destinationKey(h, l), routers.linkMtu(), nowNs);
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
        return Ipv6Header.pseudoHeaderSum(outSegment, outHeaderOffset, upperLength, upperProtocol);
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
            case MODE_STAGING -> sendFragments();
            default -> throw new IllegalStateException("no IPv6 packet open");
        }
        counters.txPackets.incrementRelease();
        mode = MODE_NONE;
    }

    /**
     * Sends the staged packet as fragments (RFC 8200 §4.5): each the fixed header, a fragment header and a multiple
     * of 8 bytes that fits the link, with one identification that no one can predict (RFC 7739: a keyed hash of the
     * destination and a counter), through the neighbour cache like any packet.
     */
    private void sendFragments() {
        final MemorySegment packet = staging.slab();
        final long header = staging.offset(0);
        final int payload = outPayloadLength;
        final int chunk = (outMtu - Ipv6Header.LENGTH - FRAGMENT_HEADER_LENGTH) & ~7;
        final int nextHeader = BigEndian.u8(packet, header + 6);
        final int identification = (int) dev.tern.core.hash.SipHash.hash(identificationKey0, identificationKey1,
            outNextHopHigh ^ outNextHopLow, identificationCounter++);
        counters.txFragmentedPackets.incrementRelease();
        for (int at = 0; at < payload; at += chunk) {
            final int length = Math.min(chunk, payload - at);
            final int fragmentLength = Ipv6Header.LENGTH + FRAGMENT_HEADER_LENGTH + length;
            final MemorySegment out;
            final long to;
            int buffer = -1;
            long mac = outMac;
            if (mac == Ipv6NeighbourCache.UNRESOLVED) {
                mac = neighbours.peek(outNextHopHigh, outNextHopLow);
            }
            if (mac == Ipv6NeighbourCache.UNRESOLVED) {
                buffer = neighbours.queueBegin();
                if (buffer < 0) {
                    counters.txNoBuffer.incrementRelease();
                    continue;
                }
                out = neighbours.pendingSegment();
                to = neighbours.pendingOffset(buffer);
            } else {
                if (!ethernet.begin(mac, EtherType.IPV6)) {
                    counters.txNoBuffer.incrementRelease();
                    continue;
                }
                out = ethernet.frame().segment();
                to = ethernet.payloadOffset();
            }
            MemorySegment.copy(packet, header, out, to, Ipv6Header.LENGTH);
            BigEndian.u16(out, to + 4, FRAGMENT_HEADER_LENGTH + length);
            BigEndian.u8(out, to + 6, NextHeader.FRAGMENT);
            final long fragment = to + Ipv6Header.LENGTH;
            BigEndian.u8(out, fragment, nextHeader);
            BigEndian.u8(out, fragment + 1, 0);
            BigEndian.u16(out, fragment + 2, at | (at + length < payload ? 1 : 0));
            BigEndian.i32(out, fragment + 4, identification);
            MemorySegment.copy(packet, header + Ipv6Header.LENGTH + at, out, fragment + FRAGMENT_HEADER_LENGTH, length);
            if (buffer >= 0) {
                neighbours.queueCommit(outNextHopHigh, outNextHopLow, buffer, fragmentLength);
            } else {
                ethernet.send(fragmentLength);
            }
            counters.txFragments.incrementRelease();
        }
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
        reassembler.close();
        staging.close();
    }
}
