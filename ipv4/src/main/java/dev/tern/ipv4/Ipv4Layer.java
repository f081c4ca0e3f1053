package dev.tern.ipv4;

import dev.tern.arp.ArpLayer;
import dev.tern.arp.NeighbourCache;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.memory.FramePool;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.PathMtuCache;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv4.wire.Ipv4Options;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;

/**
 * IPv4 (RFC 791, host requirements of RFC 1122 §3) for one interface.
 *
 * <h2>Input</h2>
 * Checks each header once ({@link Ipv4Header#check}), drops martian sources (counted by reason), accepts datagrams for
 * our address, the limited and the subnet broadcast, and multicast groups the {@link MulticastFilter} lets through;
 * validates options ({@link Ipv4Options}: malformed ones get ICMP Parameter Problem, source routes are dropped,
 * Record Route and Timestamp are ignored); reassembles fragments; and hands each datagram to the
 * {@link IpProtocolHandler} registered for its protocol. A unicast datagram for a protocol nobody registered gets ICMP
 * protocol unreachable. This layer never forwards.
 *
 * <h2>Output</h2>
 * A transport sends with {@link #begin} (route, path MTU and next hop are settled, the header is written), writes
 * its header and data at {@link #payloadOffset()} in {@link #segment()}, then {@link #commit}s. Depending on the
 * destination, the datagram is written:
 * <ul>
 *   <li>straight into a link frame, when the next hop's MAC is known (the fast path: no copy);</li>
 *   <li>into the neighbour cache's pending buffer, when the next hop is still being resolved;</li>
 *   <li>into a staging buffer, when it exceeds the path MTU and may be fragmented;</li>
 *   <li>into a loopback queue, when it is for our own address (delivered at the next poll).</li>
 * </ul>
 *
 * <p>Identification values come from {@link IdentificationGenerator} (per destination, keyed: RFC 6864, RFC 7739).
 * docs/DESIGN.md ("IPv4 input checks, in order") gives the whole policy with its RFC references.
 *
 * <p>Owned by the shard thread; not thread-safe. One datagram is open at a time.
 */
public final class Ipv4Layer implements EthernetLayer.Handler {
    /** {@link #begin} results. */
    public static final int OK = 0;
    public static final int ERR_NO_ROUTE = -1;
    public static final int ERR_NO_BUFFER = -2;
    public static final int ERR_MESSAGE_TOO_LONG = -3;
    public static final int ERR_BAD_ADDRESS = -4;

    private static final int MODE_NONE = 0;
    private static final int MODE_FRAME = 1;
    private static final int MODE_PENDING = 2;
    private static final int MODE_STAGING = 3;
    private static final int MODE_LOOPBACK = 4;

    private static final int ROUTER_ALERT_HEADER_LENGTH = 24;
    // Drop reasons: 1..5 are Ipv4Header's, then this layer's, then Ipv4Options' shifted by DROP_OPTION.
    private static final int DROP_NOT_FOR_US = 6;
    private static final int DROP_UNKNOWN_PROTOCOL = 7;
    private static final int DROP_UNICAST_IN_LINK_BROADCAST = 8;
    private static final int DROP_MARTIAN_SELF = 9;
    private static final int DROP_MARTIAN_ZERO = 10;
    private static final int DROP_MARTIAN_LOOPBACK = 11;
    private static final int DROP_MARTIAN_BROADCAST = 12;
    private static final int DROP_MARTIAN_MULTICAST = 13;
    private static final int DROP_MARTIAN_CLASS_E = 14;
    private static final int DROP_SOURCE_ROUTED = 15;
    /** Ipv4Options' reason r is counted at DROP_OPTION + r. */
    private static final int DROP_OPTION = DROP_SOURCE_ROUTED;
    private static final String[] DROP_NAMES = {null, "too_short", "bad_version", "bad_header_length",
        "bad_total_length", "bad_checksum", "not_for_us", "unknown_protocol", "unicast_in_link_broadcast",
        "martian_source_self", "martian_source_zero", "martian_source_loopback", "martian_source_broadcast",
        "martian_source_multicast", "martian_source_class_e", "source_routed", "option_bad_length",
        "option_past_header", "option_bad_pointer", "option_duplicate", "option_bad_timestamp_flag"};

    private final EthernetLayer ethernet;
    private final ArpLayer arp;
    private final NeighbourCache neighbours;
    private final InterfaceAddress address;
    private final Ipv4Config config;
    private final RoutingTable routes = new RoutingTable();
    private final PathMtuCache pathMtus;
    private final FragmentReassembler reassembler;
    private final IcmpLayer icmp;
    private final IpProtocolHandler[] handlers = new IpProtocolHandler[256];
    /** RFC 1122 §3.3.1.2: the default gateways in preference order; {@link #currentGateway} indexes the one in use. */
    private int[] defaultGateways = new int[0];
    private int currentGateway;
    private MulticastFilter multicastFilter = (group, source, protocol) -> false;

    private final Ipv4Header rxHeader = new Ipv4Header();
    private final Ipv4Options rxOptions = new Ipv4Options();
    private final Ipv4Header txHeader = new Ipv4Header();
    private final Ipv4Header stagedHeader = new Ipv4Header();
    private final Ipv4Header fragmentHeader = new Ipv4Header();
    private final Ipv4Packet packet = new Ipv4Packet();

    private final FramePool staging;
    private final int stagingBuffer;
    private final FramePool loopback;
    private final int[] loopbackQueue;
    private final int[] loopbackLength;
    private int loopbackCount;

    private int mode = MODE_NONE;
    private MemorySegment outSegment;
    private long outHeaderOffset;
    private int outTotalLength;
    private int outHeaderLength = Ipv4Header.MIN_LENGTH;
    private int outNextHop;
    private long outMac;
    private int outPathMtu;
    private int outPendingBuffer;
    private int outLoopbackBuffer;
    private final IdentificationGenerator identifications;

    private final AtomicCounter rxPackets;
    private final AtomicCounter rxDelivered;
    private final AtomicCounter[] drops;
    private final AtomicCounter txPackets;
    private final AtomicCounter txFragments;
    private final AtomicCounter txFragmentedDatagrams;
    private final AtomicCounter txNoRoute;
    private final AtomicCounter txNoBuffer;
    private final AtomicCounter txTooLong;
    private final AtomicCounter txHostUnreachable;
    private final AtomicCounter loopbackPackets;
    private final AtomicCounter gatewaySwitches;

    public Ipv4Layer(EthernetLayer ethernet, ArpLayer arp, Timers timers, Ipv4Config config, CountersFile counters) {
        this.ethernet = ethernet;
        this.arp = arp;
        this.neighbours = arp.neighbours();
        this.address = arp.address();
        this.config = config;
        this.pathMtus = new PathMtuCache(config.pathMtuEntries(), config.pathMtuTimeoutNs());
        this.rxPackets = counters.counter("ipv4.rx.packets");
        this.rxDelivered = counters.counter("ipv4.rx.delivered");
        this.drops = counters.counters("ipv4.drop.", DROP_NAMES);
        this.txPackets = counters.counter("ipv4.tx.packets");
        this.txFragments = counters.counter("ipv4.tx.fragments");
        this.txFragmentedDatagrams = counters.counter("ipv4.tx.fragmented_datagrams");
        this.txNoRoute = counters.counter("ipv4.tx.no_route");
        this.txNoBuffer = counters.counter("ipv4.tx.no_buffer");
        this.txTooLong = counters.counter("ipv4.tx.message_too_long");
        this.txHostUnreachable = counters.counter("ipv4.tx.host_unreachable");
        this.loopbackPackets = counters.counter("ipv4.loopback.packets");
        this.gatewaySwitches = counters.counter("ipv4.gateway.switches");
        this.reassembler = new FragmentReassembler(this, timers, config, counters);
        this.icmp = new IcmpLayer(this, config, counters);
        this.staging = FramePool.allocate(1, Ipv4Header.MAX_TOTAL_LENGTH);
        this.stagingBuffer = staging.acquire();
        this.loopback = FramePool.allocate(16, Ipv4Header.MAX_TOTAL_LENGTH);
        this.loopbackQueue = new int[16];
        this.loopbackLength = new int[16];
        this.identifications = identificationGenerator(config);
        routes.add(address.network(), address.prefixLength(), 0);
        handlers[IpProtocol.ICMP] = icmp;
        ethernet.register(EtherType.IPV4, this);
        ethernet.onInternalError(this::abort);
        arp.onUnreachable(this::hostUnreachable);
        arp.onFailed(this::neighbourFailed);
    }

    private static IdentificationGenerator identificationGenerator(Ipv4Config config) {
        if (config.identificationKey0() != 0 || config.identificationKey1() != 0) {
            return new IdentificationGenerator(config.identificationKey0(), config.identificationKey1());
        }
        final SecureRandom random = new SecureRandom();
        return new IdentificationGenerator(random.nextLong(), random.nextLong());
    }

    public InterfaceAddress address() {
        return address;
    }

    public RoutingTable routes() {
        return routes;
    }

    /** Adds a default route via {@code gateway} (which must be on-link): {@link #defaultGateways} with one. */
    public void defaultGateway(int gateway) {
        defaultGateways(gateway);
    }

    /**
     * The default gateways in preference order (each must be on-link; RFC 1122 §3.3.1.2); the first becomes the
     * default route. When the neighbour cache gives up on the one in use, the next takes its place
     * ({@link #neighbourFailed}). Cold path.
     */
    public void defaultGateways(int... gateways) {
        if (gateways.length == 0) {
            throw new IllegalArgumentException("no default gateway");
        }
        defaultGateways = gateways.clone();
        currentGateway = 0;
        routes.add(0, 0, defaultGateways[0]);
    }

    /** The default gateway in use, or 0 when there is none. */
    public int currentDefaultGateway() {
        return defaultGateways.length == 0 ? 0 : defaultGateways[currentGateway];
    }

    /**
     * Dead gateway detection (RFC 1122 §3.3.1.4) and a new choice (§3.3.1.5): the neighbour cache forgot {@code
     * neighbour} because its probes or requests went unanswered, whatever started them (TCP's negative advice, an
     * entry in use that went unconfirmed, a resolution). If it is the default gateway in use and there are others, the
     * next in the list (wrapping around) becomes the default route, so the next datagram routed by default goes
     * through it. "Such a host SHOULD switch to another default gateway" (§3.3.1.5). With one gateway nothing changes:
     * the next packet resolves it again. Allocates nothing (the route is replaced in place).
     */
    private void neighbourFailed(int neighbour, long nowNs) {
        if (defaultGateways.length < 2 || neighbour != defaultGateways[currentGateway]) {
            return;
        }
        currentGateway = (currentGateway + 1) % defaultGateways.length;
        routes.add(0, 0, defaultGateways[currentGateway]);
        gatewaySwitches.incrementRelease();
    }

    public PathMtuCache pathMtus() {
        return pathMtus;
    }

    public IcmpLayer icmp() {
        return icmp;
    }

    public NeighbourCache neighbours() {
        return neighbours;
    }

    public EthernetLayer ethernet() {
        return ethernet;
    }

    /**
     * Positive advice from a transport (RFC 4861 §7.3.1, RFC 1122 §3.3.1.4): it saw forward progress toward {@code
     * destination} (a TCP ACK of new data), so the neighbour that is the next hop toward it is reachable
     * ({@link NeighbourCache#confirm}), as Linux's dst_confirm confirms the route's next hop. Allocates nothing.
     */
    public void confirmNextHop(int destination, long nowNs) {
        final int nextHop = nextHop(destination);
        if (nextHop != 0) {
            neighbours.confirm(nextHop, nowNs);
        }
    }

    /** The neighbour a datagram to {@code destination} goes to: its route's gateway, or itself on-link; 0: no route. */
    private int nextHop(int destination) {
        final int route = routes.lookup(destination);
        return route == RoutingTable.NO_ROUTE ? 0 : routes.nextHop(route, destination);
    }

    /**
     * Negative advice from a transport (RFC 1122 §3.3.1.4, "Dead Gateway Detection"): it saw no progress toward
     * {@code destination} (TCP at its retransmission threshold R1, RFC 1122 §4.2.3.5), so the neighbour that is the
     * next hop toward it, the gateway of its route or the destination itself on-link, is probed again
     * ({@link NeighbourCache#suspect}). Tern has no route cache, so the advice re-confirms the next hop's link-layer
     * address; if the probes go unanswered and the next hop is the default gateway in use, {@link #neighbourFailed}
     * chooses the next one. Returns whether it started a probe (or forgot the entry); no route, our own address,
     * broadcast, multicast and an unknown neighbour change nothing. Allocates nothing.
     */
    public boolean negativeAdvice(int destination, long nowNs) {
        if (destination == address.address() || Ipv4Address.isMulticast(destination)
            || destination == Ipv4Address.LIMITED_BROADCAST || destination == address.broadcast()) {
            return false;
        }
        final int nextHop = nextHop(destination);
        return nextHop != 0 && neighbours.suspect(nextHop, nowNs);
    }

    public int mtu() {
        return ethernet.mtu();
    }

    /** Registers the transport for {@code protocol}. Cold path. */
    public void register(int protocol, IpProtocolHandler handler) {
        handlers[protocol] = handler;
    }

    /** Sets who decides which multicast datagrams are received (the IGMP layer). */
    public void multicastFilter(MulticastFilter filter) {
        this.multicastFilter = filter;
    }

    // ------------------------------------------------------------------------------------------------ input

    @Override
    public void onPacket(MemorySegment segment, long offset, int length, int rxFlags, long sourceMac,
                         long destinationMac, long nowNs) {
        receive(segment, offset, length, rxFlags, MacAddress.isMulticast(destinationMac), true, nowNs);
    }

    private void receive(MemorySegment segment, long offset, int length, int rxFlags, boolean linkGroupAddressed,
                         boolean fromWire, long nowNs) {
        rxPackets.incrementRelease();
        rxHeader.wrap(segment, offset, length);
        final int reason = rxHeader.check((rxFlags & Offloads.RX_CHECKSUM_OK) == 0);
        if (reason != Ipv4Header.OK) {
            drops[reason].incrementRelease();
            return;
        }
        final int source = rxHeader.source();
        final int destination = rxHeader.destination();
        final int martian = martianSource(source, destination, rxHeader.protocol(), fromWire);
        if (martian != Ipv4Header.OK) {
            drops[martian].incrementRelease();
            return;
        }
        final int kind;
        if (destination == address.address()) {
            kind = Ipv4Packet.UNICAST;
        } else if (destination == Ipv4Address.LIMITED_BROADCAST || destination == address.broadcast()) {
            kind = Ipv4Packet.BROADCAST;
        } else if (Ipv4Address.isMulticast(destination)
            && (destination == Ipv4Address.ALL_SYSTEMS || multicastFilter.accepts(destination, source, rxHeader.protocol()))) {
            kind = Ipv4Packet.MULTICAST;
        } else {
            drops[DROP_NOT_FOR_US].incrementRelease();
            return;
        }
        if (linkGroupAddressed && kind == Ipv4Packet.UNICAST) {
            // RFC 1122 §3.3.6: a datagram for a unicast address that came as a link-layer broadcast or multicast
            // SHOULD be discarded; answering (echo, ICMP errors) would make every host on the segment answer.
            drops[DROP_UNICAST_IN_LINK_BROADCAST].incrementRelease();
            return;
        }
        if (rxHeader.headerLength() > Ipv4Header.MIN_LENGTH && !acceptOptions(kind, nowNs)) {
            return;
        }
        if (rxHeader.isFragment()) {
            final int slot = reassembler.accept(rxHeader, nowNs);
            if (slot >= 0) {
                try {
                    final long datagram = reassembler.datagramOffset(slot);
                    rxHeader.wrap(reassembler.segment(), datagram, reassembler.datagramLength(slot));
                    describe(rxHeader, kind, rxFlags, true);
                    deliver(reassembler.segment(), datagram + packet.headerLength,
                        packet.totalLength - packet.headerLength, nowNs);
                } finally {
                    reassembler.release(slot);
                }
            }
            return;
        }
        describe(rxHeader, kind, rxFlags, false);
        deliver(segment, offset + packet.headerLength, packet.totalLength - packet.headerLength, nowNs);
    }

    /**
     * RFC 1122 §3.2.1.3 and RFC 1812 §5.3.7: a datagram whose source cannot be a single host is discarded silently
     * (answering it, with an echo reply or an ICMP error, would reach a whole subnet, a group, or nobody). Returns
     * the drop reason, or {@link Ipv4Header#OK}.
     */
    private int martianSource(int source, int destination, int protocol, boolean fromWire) {
        if ((source >>> 24) == 0) {
            // {0, 0} is legal "as a source address as part of an initialization procedure" (RFC 1122 §3.2.1.3 (a)).
            // Accepted only where such a procedure sends it: to the limited broadcast (a DHCP or BOOTP client with no
            // address yet, RFC 2131 §4.1) and IGMP to a group (RFC 3376 §4.2.13 asks routers to accept reports from
            // 0.0.0.0; RFC 4541 §2.1.1 lets snooping switches query from it). Linux makes the same exceptions. The
            // rest of 0/8 ({0, host}) is never a source.
            if (source == 0 && (destination == Ipv4Address.LIMITED_BROADCAST
                || (protocol == IpProtocol.IGMP && Ipv4Address.isMulticast(destination)))) {
                return Ipv4Header.OK;
            }
            return DROP_MARTIAN_ZERO;
        }
        if (Ipv4Address.isLoopback(source)) {
            return DROP_MARTIAN_LOOPBACK; // 127/8 never appears outside a host (RFC 1122 §3.2.1.3 (g))
        }
        if (source == Ipv4Address.LIMITED_BROADCAST || source == address.broadcast()) {
            return DROP_MARTIAN_BROADCAST; // (c), (d): a smurf's reply address
        }
        if (address.prefixLength() < 31 && source == address.network()) {
            // The subnet's address with host part 0 is 4.2BSD's broadcast, which RFC 1122 §3.3.6 asks hosts to
            // accept as one: as a source it is a broadcast too. A /31 or /32 has no such address (RFC 3021).
            return DROP_MARTIAN_BROADCAST;
        }
        if (Ipv4Address.isMulticast(source)) {
            return DROP_MARTIAN_MULTICAST; // RFC 1112 §7.2: a group address is never a source
        }
        if (Ipv4Address.isReserved(source)) {
            return DROP_MARTIAN_CLASS_E; // 240/4, reserved (RFC 1812 §5.3.7)
        }
        if (fromWire && source == address.address()) {
            // The "land" attack: our own address arriving from outside (what we send ourselves comes through the
            // loopback queue, and the Ethernet layer drops our own frames looped back). Answering would talk to
            // ourselves. RFC 1812 §5.3.7 names "one of the router's own addresses" a martian source too.
            return DROP_MARTIAN_SELF;
        }
        return Ipv4Header.OK;
    }

    /**
     * Validates the options (RFC 791 §3.1, see {@link Ipv4Options}) and applies the options policy; false when the
     * datagram is dropped (counted).
     * <ul>
     *   <li>Malformed: dropped with an ICMP Parameter Problem whose pointer names the offending octet (RFC 1122
     *       §3.2.2.5 "SHOULD"; RFC 1812 §4.3.2.7's exceptions and the rate limits apply in {@link IcmpLayer}).</li>
     *   <li>Loose or strict source route: dropped silently, as Linux does with accept_source_route 0. Deviation:
     *       RFC 1122 §3.2.1.8 (c) asks a host to pass a completed source route up and reverse it for replies; a
     *       source route is mostly an attacker's way around address-based filters and through firewalls (RFC 7126
     *       §4.3, §4.4 recommend dropping), and nothing in Tern would use the reversed route.</li>
     *   <li>Record Route, Timestamp, Router Alert and unknown options: accepted, then ignored. A host that does not
     *       forward has nothing to record; Timestamp is optional for hosts (RFC 1122 §3.2.1.8 (e)). Echo replies
     *       carry no options. Deviation: RFC 1122 §3.2.2.6 says they SHOULD carry a received Record Route or
     *       Timestamp back.</li>
     * </ul>
     */
    private boolean acceptOptions(int kind, long nowNs) {
        final int reason = rxOptions.wrap(rxHeader.segment(), rxHeader.base(), rxHeader.headerLength()).check();
        if (reason != Ipv4Options.OK) {
            drops[DROP_OPTION + reason].incrementRelease();
            icmp.sendError(IcmpHeader.PARAMETER_PROBLEM, 0, rxOptions.problemPointer() << 24, rxHeader.source(),
                rxHeader.destination(), kind, rxHeader.segment(), rxHeader.base(), rxHeader.totalLength(), nowNs);
            return false;
        }
        if (rxOptions.sourceRouteOffset() != 0) {
            drops[DROP_SOURCE_ROUTED].incrementRelease();
            return false;
        }
        return true;
    }

    private void describe(Ipv4Header header, int kind, int rxFlags, boolean reassembled) {
        packet.source = header.source();
        packet.destination = header.destination();
        packet.protocol = header.protocol();
        packet.ttl = header.ttl();
        packet.tos = header.tos();
        packet.kind = kind;
        packet.rxFlags = reassembled ? 0 : rxFlags;
        packet.reassembled = reassembled;
        packet.headerSegment = header.segment();
        packet.headerOffset = header.base();
        packet.headerLength = header.headerLength();
        packet.totalLength = header.totalLength();
    }

    private void deliver(MemorySegment segment, long payloadOffset, int payloadLength, long nowNs) {
        final IpProtocolHandler handler = handlers[packet.protocol];
        if (handler == null) {
            drops[DROP_UNKNOWN_PROTOCOL].incrementRelease();
            // RFC 1122 §3.2.2.1: a host SHOULD report an unknown protocol with protocol unreachable.
            icmp.sendError(IcmpHeader.DESTINATION_UNREACHABLE, IcmpHeader.PROTOCOL_UNREACHABLE, packet, nowNs);
            return;
        }
        rxDelivered.incrementRelease();
        handler.onPacket(packet, segment, payloadOffset, payloadLength, nowNs);
    }

    /** Passes an ICMP error about one of our datagrams to the transport that sent it. */
    void deliverError(int type, int code, int nextHopMtu, int reporter, int originalSource, int originalDestination,
                      int protocol, MemorySegment segment, long transportOffset, int transportLength, long nowNs) {
        final IpProtocolHandler handler = handlers[protocol];
        if (handler != null) {
            handler.onIcmpError(type, code, nextHopMtu, reporter, originalSource, originalDestination, segment,
                transportOffset, transportLength, nowNs);
        }
    }

    /** A datagram we queued never left: its next hop did not answer ARP. Tell its sender, as Linux does (EHOSTUNREACH). */
    private void hostUnreachable(MemorySegment segment, long offset, int length, long nowNs) {
        txHostUnreachable.incrementRelease();
        txHeader.wrap(segment, offset, length);
        if (txHeader.fragmentOffset() != 0) {
            return;
        }
        final int headerLength = txHeader.headerLength();
        deliverError(IcmpHeader.DESTINATION_UNREACHABLE, IcmpHeader.HOST_UNREACHABLE, 0, address.address(),
            txHeader.source(), txHeader.destination(), txHeader.protocol(), segment, offset + headerLength,
            length - headerLength, nowNs);
    }

    /** Fragment reassembly gave up on a datagram whose first fragment came (RFC 792: time exceeded, code 1). */
    void reassemblyTimedOut(MemorySegment segment, long headerOffset, int headerLength, int availableLength, long nowNs) {
        rxHeader.wrap(segment, headerOffset, availableLength);
        icmp.sendError(IcmpHeader.TIME_EXCEEDED, IcmpHeader.REASSEMBLY_TIME_EXCEEDED, 0, rxHeader.source(),
            rxHeader.destination(), rxHeader.destination() == address.address() ? Ipv4Packet.UNICAST : Ipv4Packet.BROADCAST,
            segment, headerOffset, Math.min(availableLength, headerLength + 8), nowNs);
    }

    /** Delivers datagrams we sent to ourselves; call once per poll. Returns how many. */
    public int pollLoopback(long nowNs) {
        final int count = loopbackCount;
        for (int i = 0; i < count; i++) {
            final int buffer = loopbackQueue[i];
            loopbackPackets.incrementRelease();
            receive(loopback.slab(), loopback.offset(buffer), loopbackLength[i], Offloads.RX_CHECKSUM_OK, false, false,
                nowNs);
            loopback.release(buffer);
        }
        // Datagrams looped back while delivering wait for the next poll.
        System.arraycopy(loopbackQueue, count, loopbackQueue, 0, loopbackCount - count);
        System.arraycopy(loopbackLength, count, loopbackLength, 0, loopbackCount - count);
        loopbackCount -= count;
        return count;
    }

    // ----------------------------------------------------------------------------------------------- output

    /**
     * Opens a datagram of {@code payloadLength} bytes to {@code destination}; returns {@link #OK} or an error code
     * (counted). {@code source} 0 means our address; {@code ttl} 0 the default TTL. With {@code dontFragment}, a
     * datagram larger than the path MTU is refused with {@link #ERR_MESSAGE_TOO_LONG} (the caller reports EMSGSIZE).
     */
    public int begin(int source, int destination, int protocol, int payloadLength, int ttl, int tos,
                     boolean dontFragment, long nowNs) {
        if (mode != MODE_NONE) {
            throw new IllegalStateException("a datagram is already open");
        }
        if (source != 0 && source != address.address()) {
            return ERR_BAD_ADDRESS;
        }
        final int totalLength = Ipv4Header.MIN_LENGTH + payloadLength;
        if (totalLength > Ipv4Header.MAX_TOTAL_LENGTH) {
            txTooLong.incrementRelease();
            return ERR_MESSAGE_TOO_LONG;
        }
        final int result = openRouted(destination, totalLength, dontFragment, nowNs);
        if (result != OK) {
            return result;
        }
        outTotalLength = totalLength;
        txHeader.wrap(outSegment, outHeaderOffset, Ipv4Header.MIN_LENGTH).write(tos, totalLength,
            identifications.next(address.address(), destination, protocol), dontFragment ? Ipv4Header.FLAG_DONT_FRAGMENT : 0,
            ttl == 0 ? config.defaultTtl() : ttl, protocol, address.address(), destination);
        return OK;
    }

    /**
     * True when the link splits large TCP segments itself (TSO/GSO) and completes their checksums: a transport may
     * then send up to 64 KiB at once with {@link #beginSegmented}.
     */
    public boolean segmentationOffload() {
        final int needed = Offloads.TX_TCP_SEGMENTATION | Offloads.TX_L4_CHECKSUM;
        return (ethernet.link().offloads() & needed) == needed;
    }

    /**
     * Opens a datagram larger than the path MTU that the link will cut into segments of {@code segmentSize} payload
     * bytes (TSO). Only straight into a link frame: when the link cannot segment, the next hop is not resolved, or
     * the frame would not fit, returns {@link #ERR_MESSAGE_TOO_LONG} and the transport sends MSS-sized segments
     * instead. The transport must request L4 checksum completion ({@link #requestL4Checksum}).
     */
    public int beginSegmented(int destination, int protocol, int payloadLength, int ttl, int tos, int segmentSize,
                              long nowNs) {
        if (mode != MODE_NONE) {
            throw new IllegalStateException("a datagram is already open");
        }
        final int totalLength = Ipv4Header.MIN_LENGTH + payloadLength;
        if (!segmentationOffload() || totalLength > Ipv4Header.MAX_TOTAL_LENGTH || destination == address.address()
            || Ipv4Address.isMulticast(destination)) {
            return ERR_MESSAGE_TOO_LONG;
        }
        final int route = routes.lookup(destination);
        if (route == RoutingTable.NO_ROUTE) {
            txNoRoute.incrementRelease();
            return ERR_NO_ROUTE;
        }
        final long mac = neighbours.resolve(routes.nextHop(route, destination), nowNs);
        if (mac == NeighbourCache.UNRESOLVED) {
            return ERR_MESSAGE_TOO_LONG;
        }
        if (!ethernet.begin(mac, EtherType.IPV4)) {
            txNoBuffer.incrementRelease();
            return ERR_NO_BUFFER;
        }
        if (ethernet.payloadCapacity() < totalLength) {
            ethernet.abort();
            return ERR_MESSAGE_TOO_LONG;
        }
        mode = MODE_FRAME;
        outSegment = ethernet.frame().segment();
        outHeaderOffset = ethernet.payloadOffset();
        outTotalLength = totalLength;
        ethernet.frame().requestSegmentation(segmentSize);
        // The link numbers the segments it cuts with consecutive IDs: reserve one per segment (at most; the transport
        // header is counted as data here).
        final int segments = (payloadLength + segmentSize - 1) / segmentSize;
        txHeader.wrap(outSegment, outHeaderOffset, Ipv4Header.MIN_LENGTH).write(tos, totalLength,
            identifications.reserve(address.address(), destination, protocol, segments), Ipv4Header.FLAG_DONT_FRAGMENT, ttl == 0 ? config.defaultTtl() : ttl, protocol, address.address(), destination);
        return OK;
    }

    /**
     * Opens a datagram whose header carries the Router Alert option (RFC 2113), as IGMP messages must
     * (RFC 3376 §4, RFC 2236 §2). It must fit the MTU unfragmented.
     */
    public int beginWithRouterAlert(int destination, int protocol, int payloadLength, int ttl, long nowNs) {
        if (mode != MODE_NONE) {
            throw new IllegalStateException("a datagram is already open");
        }
        final int totalLength = ROUTER_ALERT_HEADER_LENGTH + payloadLength;
        final int result = openRouted(destination, totalLength, true, nowNs);
        if (result != OK) {
            return result;
        }
        outTotalLength = totalLength;
        outHeaderLength = ROUTER_ALERT_HEADER_LENGTH;
        txHeader.wrap(outSegment, outHeaderOffset, ROUTER_ALERT_HEADER_LENGTH).headerLength(ROUTER_ALERT_HEADER_LENGTH)
            .tos(0xC0).totalLength(totalLength).identification(identifications.next(address.address(), destination, protocol)).flagsAndFragmentOffset(0)
            .ttl(ttl).protocol(protocol).source(address.address()).destination(destination).checksum(0);
        // Router Alert: copied flag set, option 20, length 4, value 0 ("examine this packet").
        outSegment.set(dev.tern.core.memory.BigEndian.INT, outHeaderOffset + Ipv4Header.MIN_LENGTH, 0x9404_0000);
        txHeader.fillChecksum();
        return OK;
    }

    private int openRouted(int destination, int totalLength, boolean dontFragment, long nowNs) {
        if (destination == address.address()) {
            return openLoopback();
        }
        final long mac;
        if (Ipv4Address.isMulticast(destination)) {
            mac = MacAddress.ofIpv4Multicast(destination);
            outPathMtu = ethernet.mtu();
        } else if (destination == Ipv4Address.LIMITED_BROADCAST || destination == address.broadcast()) {
            mac = MacAddress.BROADCAST;
            outPathMtu = ethernet.mtu();
        } else {
            final int route = routes.lookup(destination);
            if (route == RoutingTable.NO_ROUTE) {
                txNoRoute.incrementRelease();
                return ERR_NO_ROUTE;
            }
            outNextHop = routes.nextHop(route, destination);
            outPathMtu = pathMtus.mtu(destination, ethernet.mtu(), nowNs);
            mac = neighbours.resolve(outNextHop, nowNs);
        }
        if (totalLength > outPathMtu) {
            if (dontFragment) {
                txTooLong.incrementRelease();
                return ERR_MESSAGE_TOO_LONG;
            }
            outMac = mac;
            mode = MODE_STAGING;
            outSegment = staging.slab();
            outHeaderOffset = staging.offset(stagingBuffer);
            return OK;
        }
        if (mac == NeighbourCache.UNRESOLVED) {
            final int buffer = neighbours.queueBegin();
            if (buffer < 0) {
                txNoBuffer.incrementRelease();
                return ERR_NO_BUFFER;
            }
            mode = MODE_PENDING;
            outPendingBuffer = buffer;
            outSegment = neighbours.pendingSegment();
            outHeaderOffset = neighbours.pendingOffset(buffer);
            return OK;
        }
        if (!ethernet.begin(mac, EtherType.IPV4)) {
            txNoBuffer.incrementRelease();
            return ERR_NO_BUFFER;
        }
        mode = MODE_FRAME;
        outSegment = ethernet.frame().segment();
        outHeaderOffset = ethernet.payloadOffset();
        return OK;
    }

    private int openLoopback() {
        if (loopbackCount == loopbackQueue.length) {
            txNoBuffer.incrementRelease();
            return ERR_NO_BUFFER;
        }
        outLoopbackBuffer = loopback.acquire();
        mode = MODE_LOOPBACK;
        outSegment = loopback.slab();
        outHeaderOffset = loopback.offset(outLoopbackBuffer);
        return OK;
    }

    /** Memory of the open datagram. */
    public MemorySegment segment() {
        return outSegment;
    }

    /** Where the transport writes its header and data in {@link #segment()}. */
    public long payloadOffset() {
        return outHeaderOffset + outHeaderLength;
    }

    /**
     * True when the open datagram goes straight into a link frame whose link completes L4 checksums: the transport
     * then writes only the pseudo-header sum and calls {@link #requestL4Checksum}.
     */
    public boolean l4ChecksumOffload() {
        return mode == MODE_FRAME && (ethernet.link().offloads() & Offloads.TX_L4_CHECKSUM) != 0;
    }

    /** Asks the link to complete the checksum at {@code fieldOffset} within the transport header. */
    public void requestL4Checksum(int fieldOffset) {
        ethernet.frame().requestL4Checksum(EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH, fieldOffset);
    }

    /** Sends (or queues, fragments, loops back) the open datagram. */
    public void commit() {
        switch (mode) {
            case MODE_FRAME -> ethernet.send(outTotalLength);
            case MODE_PENDING -> neighbours.queueCommit(outNextHop, outPendingBuffer, outTotalLength);
            case MODE_STAGING -> fragment();
            case MODE_LOOPBACK -> {
                loopbackQueue[loopbackCount] = outLoopbackBuffer;
                loopbackLength[loopbackCount++] = outTotalLength;
            }
            default -> throw new IllegalStateException("no datagram open");
        }
        mode = MODE_NONE;
        outHeaderLength = Ipv4Header.MIN_LENGTH;
        txPackets.incrementRelease();
    }

    /** Drops the open datagram. */
    public void abort() {
        switch (mode) {
            case MODE_FRAME -> ethernet.abort();
            case MODE_PENDING -> neighbours.queueAbort(outPendingBuffer);
            case MODE_LOOPBACK -> loopback.release(outLoopbackBuffer);
            default -> { }
        }
        mode = MODE_NONE;
        outHeaderLength = Ipv4Header.MIN_LENGTH;
    }

    /**
     * Splits the staged datagram into fragments of at most the path MTU, each payload a multiple of 8 bytes
     * except the last (RFC 791 §3.2 "fragmentation").
     */
    private void fragment() {
        final Ipv4Header whole = stagedHeader.wrap(outSegment, outHeaderOffset, outTotalLength);
        final int payloadLength = outTotalLength - Ipv4Header.MIN_LENGTH;
        final int chunk = (outPathMtu - Ipv4Header.MIN_LENGTH) & ~7;
        final int flags = whole.flagsAndFragmentOffset() & Ipv4Header.FLAG_DONT_FRAGMENT;
        final long payload = outHeaderOffset + Ipv4Header.MIN_LENGTH;
        final long mac = outMac;
        txFragmentedDatagrams.incrementRelease();
        for (int offset = 0; offset < payloadLength; offset += chunk) {
            final int length = Math.min(chunk, payloadLength - offset);
            final boolean more = offset + length < payloadLength;
            final MemorySegment out;
            final long at;
            int pending = -1;
            if (mac == NeighbourCache.UNRESOLVED) {
                pending = neighbours.queueBegin();
                if (pending < 0) {
                    txNoBuffer.incrementRelease();
                    return;
                }
                out = neighbours.pendingSegment();
                at = neighbours.pendingOffset(pending);
            } else {
                if (!ethernet.begin(mac, EtherType.IPV4)) {
                    txNoBuffer.incrementRelease();
                    return;
                }
                out = ethernet.frame().segment();
                at = ethernet.payloadOffset();
            }
            MemorySegment.copy(outSegment, payload + offset, out, at + Ipv4Header.MIN_LENGTH, length);
            fragmentHeader.wrap(out, at, Ipv4Header.MIN_LENGTH).write(whole.tos(), Ipv4Header.MIN_LENGTH + length,
                whole.identification(), flags | (more ? Ipv4Header.FLAG_MORE_FRAGMENTS : 0) | (offset >>> 3),
                whole.ttl(), whole.protocol(), whole.source(), whole.destination());
            if (pending >= 0) {
                neighbours.queueCommit(outNextHop, pending, Ipv4Header.MIN_LENGTH + length);
            } else {
                ethernet.send(Ipv4Header.MIN_LENGTH + length);
            }
            txFragments.incrementRelease();
        }
    }

    public void close() {
        reassembler.close();
        staging.close();
        loopback.close();
    }
}
