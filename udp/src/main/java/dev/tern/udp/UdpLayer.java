package dev.tern.udp;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.io.ByteRing;
import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.ShardPorts;
import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.ipv6.Ipv6Packet;
import dev.tern.ipv6.Ipv6ProtocolHandler;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;
import dev.tern.udp.wire.UdpHeader;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * UDP (RFC 768, host rules of RFC 1122 §4.1) for one stack: sockets named by handle, each with a receive ring and
 * a send ring of {@link DatagramRecords}, so an application thread and the stack thread can share a socket
 * without locks.
 *
 * <h2>Input</h2>
 * Checks length and checksum (a zero checksum means none, allowed over IPv4), then demultiplexes: a unicast
 * datagram goes to the socket connected to its source if there is one, else to a socket bound to the port;
 * broadcast and multicast go to every socket bound to the port that accepts them (multicast: the socket joined
 * the group and its source filter lets the sender through, which is Linux with {@code IP_MULTICAST_ALL} off).
 * A unicast datagram for a port nobody has gets ICMP port unreachable. A full receive ring drops the datagram,
 * counted for the socket and globally. A socket with a {@link UdpReceiveHandler} gets each datagram in place in
 * the frame when nothing older is queued for it; a datagram it declines is queued as above.
 *
 * <h2>Output</h2>
 * The application appends records to a socket's send ring; the stack's poll calls {@link #flush} for sockets with
 * pending records, which sends them (checksum by the link when it offloads). Each record carries the send options
 * in force when it was queued (broadcast allowed, multicast TTL and loopback). With multicast loopback, local
 * members of the group get a copy too.
 *
 * <h2>IPv6</h2>
 * With an {@link Ipv6Layer}, a socket opened by {@link #open6} is an IPv6 socket (RFC 8200 §8): it binds, connects,
 * sends and receives with 128-bit addresses, its records carry them ({@link DatagramRecords#IPV6}), and it sees IPv6
 * datagrams only, as a Linux socket with {@code IPV6_V6ONLY} set; so an IPv4 and an IPv6 socket may bind one port.
 * The checksum is mandatory (§8.1): one of zero is dropped ({@code udp.drop.zero_checksum_ipv6}) and a computed zero
 * goes as all ones. A unicast datagram for a port nobody has gets ICMPv6 port unreachable (RFC 4443 §3.1); one to a
 * group reaches the IPv6 sockets on the port that joined it ({@link #join6}), and none gets nothing back.
 *
 * <h2>Dual stack</h2>
 * A socket opened by {@link #openDualStack} is an IPv6 socket with {@code IPV6_V6ONLY} off, as the JDK's sockets are
 * (RFC 4038 §4.2): bound to the IPv6 wildcard it takes IPv4 datagrams too, each queued as an IPv4 record (the
 * application sees an IPv4 source, never {@code ::ffff:a.b.c.d}), and it sends IPv4 records as IPv4. It is one
 * socket in the one port table, so its port is claimed for both families at once or not at all: it collides with an
 * IPv4 socket on the port as with an IPv6 one. Bound to one of our IPv6 addresses it is an IPv6 socket only, as on
 * Linux.
 *
 * <p>Owned by the shard thread, except the rings' application ends.
 */
public final class UdpLayer implements IpProtocolHandler, Ipv6ProtocolHandler {
    private static final int FREE = 0;
    private static final int OPEN = 1;
    /** Socket flags. */
    private static final int REUSE_ADDRESS = 1;
    /** Socket flag: an IPv6 socket ({@link #open6}). */
    private static final int IPV6 = 2;
    /** Socket flag, with {@link #IPV6}: it takes and sends IPv4 too ({@link #openDualStack}, IPV6_V6ONLY off). */
    private static final int DUAL_STACK = 4;
    private static final int[] NO_SOCKETS = new int[0];

    private final Ipv4Layer ipv4;
    /** Null when the stack has no IPv6. */
    private final Ipv6Layer ipv6;
    private final UdpConfig config;
    private final UdpHeader rx = new UdpHeader();
    private final UdpHeader tx = new UdpHeader();
    /** Separate scratch headers: looping a multicast datagram back receives while a send record is peeked. */
    private final DatagramRecords inbound = new DatagramRecords();
    private final DatagramRecords outbound = new DatagramRecords();
    /** Reads queued datagrams back out of receive rings for their sockets' handlers. */
    private final DatagramRecords queued = new DatagramRecords();
    private final Int2ObjectHashMap<int[]> byPort = new Int2ObjectHashMap<>();
    private final Arena scratchArena = Arena.ofShared();
    private final MemorySegment scratch = scratchArena.allocate(UdpHeader.MAX_PAYLOAD + 8, 8);
    /** A queued datagram that wraps around its ring's end is joined here for its handler. */
    private final MemorySegment joined = scratchArena.allocate(UdpHeader.MAX_PAYLOAD_IPV6 + 8, 8);

    private final int[] state;
    private final int[] localAddress;
    private final int[] localPort;
    private final int[] remoteAddress;
    private final int[] remotePort;
    /** An IPv6 socket's local and remote addresses (all zero: any, and not connected). */
    private final long[] local6High;
    private final long[] local6Low;
    private final long[] remote6High;
    private final long[] remote6Low;
    private final int[] flags;
    /** The IPv6 source of the datagram a receive handler is being offered. */
    private long offeredSourceHigh;
    private long offeredSourceLow;
    /** Written by the stack thread, read and cleared by the application's: atomic. */
    private final java.util.concurrent.atomic.AtomicIntegerArray pendingError;
    private final long[] receiveDrops;
    private final ByteRing[] receiveRings;
    private final ByteRing[] sendRings;
    private final Arena[] arenas;
    private final UdpEvents[] events;
    /** Each socket's zero-copy receive handler, or null (the owner receives from the ring). */
    private final UdpReceiveHandler[] receiveHandlers;
    private boolean inReceiveHandler;
    /** UDP's holds: nothing waits for a held datagram to come back (it takes none of the socket's buffer). */
    private static final FrameHolds.Owner HELD_DATAGRAMS = (socket, bytes, nowNs) -> { };
    private final FrameHolds holds;
    private final AtomicCounter rxHeldDatagrams;
    private final int[][] groups;
    /** The IPv6 groups each IPv6 socket joined (any source): their high and low words, side by side. */
    private final long[][] groups6;
    private final int[][] groupModes;
    private final int[][][] groupSources;
    private int nextEphemeral;
    /** The ephemeral ports whose replies reach this layer's shard (all of them for a stack of its own). */
    private ShardPorts shardPorts = ShardPorts.ALONE;

    private final AtomicCounter rxDatagrams;
    private final AtomicCounter txDatagrams;
    private final AtomicCounter rxNoChecksum;
    private final AtomicCounter dropTooShort;
    private final AtomicCounter dropBadLength;
    private final AtomicCounter dropBadChecksum;
    private final AtomicCounter dropNoSocket;
    private final AtomicCounter dropReceiveQueueFull;
    private final AtomicCounter txErrors;
    private final AtomicCounter icmpErrors;
    private final AtomicCounter rxCopiedDatagrams;
    private final AtomicCounter rxZeroCopyDatagrams;
    private final AtomicCounter rxHandlerRingDatagrams;
    private final AtomicCounter rxHandlerErrors;
    /** IPv6 datagrams to a group that reached at least one member. */
    private final AtomicCounter rxIpv6MulticastDatagrams;
    private final AtomicCounter rxIpv6Datagrams;
    private final AtomicCounter txIpv6Datagrams;
    private final AtomicCounter dropZeroChecksumIpv6;

    /** Multicast filter modes of a socket's membership (RFC 3678 / RFC 3376 §3.1). */
    public static final int INCLUDE = 1;
    public static final int EXCLUDE = 2;

    public UdpLayer(Ipv4Layer ipv4, UdpConfig config, CountersFile counters) {
        this(ipv4, null, config, counters);
    }

    /** A layer for both families: {@code ipv6} may be null (IPv4 only). */
    public UdpLayer(Ipv4Layer ipv4, Ipv6Layer ipv6, UdpConfig config, CountersFile counters) {
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
        this.config = config;
        this.holds = ipv4.ethernet().holds();
        final int n = config.maxSockets();
        this.state = new int[n];
        this.localAddress = new int[n];
        this.localPort = new int[n];
        this.remoteAddress = new int[n];
        this.remotePort = new int[n];
        this.local6High = new long[n];
        this.local6Low = new long[n];
        this.remote6High = new long[n];
        this.remote6Low = new long[n];
        this.flags = new int[n];
        this.pendingError = new java.util.concurrent.atomic.AtomicIntegerArray(n);
        this.receiveDrops = new long[n];
        this.receiveRings = new ByteRing[n];
        this.sendRings = new ByteRing[n];
        this.arenas = new Arena[n];
        this.events = new UdpEvents[n];
        this.receiveHandlers = new UdpReceiveHandler[n];
        this.groups = new int[n][];
        this.groups6 = new long[n][];
        this.groupModes = new int[n][];
        this.groupSources = new int[n][][];
        this.nextEphemeral = config.ephemeralFirst();
        this.rxDatagrams = counters.counter("udp.rx.datagrams");
        this.txDatagrams = counters.counter("udp.tx.datagrams");
        this.rxNoChecksum = counters.counter("udp.rx.no_checksum");
        this.dropTooShort = counters.counter("udp.drop.too_short");
        this.dropBadLength = counters.counter("udp.drop.bad_length");
        this.dropBadChecksum = counters.counter("udp.drop.bad_checksum");
        this.dropNoSocket = counters.counter("udp.drop.no_socket");
        this.dropReceiveQueueFull = counters.counter("udp.drop.receive_queue_full");
        this.txErrors = counters.counter("udp.tx.errors");
        this.icmpErrors = counters.counter("udp.rx.icmp_errors");
        this.rxCopiedDatagrams = counters.counter("udp.rx.copied_datagrams");
        this.rxZeroCopyDatagrams = counters.counter("udp.rx.zero_copy_datagrams");
        this.rxHeldDatagrams = counters.counter("udp.rx.held_datagrams");
        this.rxHandlerRingDatagrams = counters.counter("udp.rx.handler_ring_datagrams");
        this.rxHandlerErrors = counters.counter("udp.rx.handler_errors");
        this.rxIpv6Datagrams = counters.counter("udp.rx.ipv6_datagrams");
        this.rxIpv6MulticastDatagrams = counters.counter("udp.rx.ipv6_multicast_datagrams");
        this.txIpv6Datagrams = counters.counter("udp.tx.ipv6_datagrams");
        this.dropZeroChecksumIpv6 = counters.counter("udp.drop.zero_checksum_ipv6");
        ipv4.register(IpProtocol.UDP, this);
        if (ipv6 != null) {
            ipv6.register(NextHeader.UDP, this);
        }
    }

    /** The configuration this layer was built with (socket ring sizes, ephemeral ports). */
    public UdpConfig config() {
        return config;
    }

    // ------------------------------------------------------------------------------------ socket management (cold)

    /** Opens an unbound IPv4 socket; returns its handle, or -{@link SocketError#TOO_MANY_SOCKETS}. */
    public int open(UdpEvents socketEvents) {
        return open(socketEvents, 0);
    }

    /**
     * Opens an unbound IPv6 socket; returns its handle, -{@link SocketError#TOO_MANY_SOCKETS}, or
     * -{@link SocketError#ADDRESS_NOT_AVAILABLE} when the stack has no IPv6.
     */
    public int open6(UdpEvents socketEvents) {
        return ipv6 == null ? -SocketError.ADDRESS_NOT_AVAILABLE : open(socketEvents, IPV6);
    }

    /**
     * Opens an unbound dual-stack socket: an IPv6 socket that takes and sends IPv4 too while it is bound to the
     * wildcard; its handle, -{@link SocketError#TOO_MANY_SOCKETS}, or -{@link SocketError#ADDRESS_NOT_AVAILABLE}
     * when the stack has no IPv6.
     */
    public int openDualStack(UdpEvents socketEvents) {
        return ipv6 == null ? -SocketError.ADDRESS_NOT_AVAILABLE : open(socketEvents, IPV6 | DUAL_STACK);
    }

    /** Whether the stack has IPv6, so that {@link #open6} can succeed. */
    public boolean hasIpv6() {
        return ipv6 != null;
    }

    private int open(UdpEvents socketEvents, int family) {
        for (int s = 0; s < state.length; s++) {
            if (state[s] == FREE) {
                final Arena arena = Arena.ofShared();
                arenas[s] = arena;
                receiveRings[s] = new ByteRing(arena.allocate(config.receiveBufferBytes(), 64));
                sendRings[s] = new ByteRing(arena.allocate(config.sendBufferBytes(), 64));
                state[s] = OPEN;
                localAddress[s] = 0;
                localPort[s] = 0;
                remoteAddress[s] = 0;
                remotePort[s] = 0;
                local6High[s] = 0;
                local6Low[s] = 0;
                remote6High[s] = 0;
                remote6Low[s] = 0;
                flags[s] = family;
                pendingError.set(s, SocketError.NONE);
                receiveDrops[s] = 0;
                events[s] = socketEvents;
                groups[s] = new int[0];
                groups6[s] = new long[0];
                groupModes[s] = new int[0];
                groupSources[s] = new int[0][];
                return s;
            }
        }
        return -SocketError.TOO_MANY_SOCKETS;
    }

    /**
     * Binds to {@code address} (0 = any of ours) and {@code port} (0 = an ephemeral port); returns the port, or a
     * negated {@link SocketError}. Several sockets may share a port only if all of them set reuse-address.
     */
    public int bind(int socket, int address, int port) {
        return bind(socket, address, port, 0, 0);
    }

    /**
     * {@link #bind}, knowing the first peer ({@code remoteAddress} 0: none yet) for an ephemeral port: on a shard of
     * several, the port is one whose replies from that peer reach this shard.
     */
    private int bind(int socket, int address, int port, int remoteAddress, int remotePort) {
        checkOpen(socket);
        if (localPort[socket] != 0 || !takesIpv4(socket)) {
            return -SocketError.INVALID;
        }
        if (address != 0 && address != ipv4.address().address() && !Ipv4Address.isMulticast(address)
            && address != ipv4.address().broadcast() && address != Ipv4Address.LIMITED_BROADCAST) {
            return -SocketError.ADDRESS_NOT_AVAILABLE;
        }
        final int before = flags[socket];
        // A dual-stack socket bound to an IPv4 address (::ffff:a.b.c.d) is an IPv4 socket from then on, as on Linux.
        flags[socket] &= ~(IPV6 | DUAL_STACK);
        localAddress[socket] = address;
        final int bound = bindPort(socket, port, remoteAddress, remotePort);
        if (bound < 0) {
            flags[socket] = before;
            localAddress[socket] = 0;
        }
        return bound;
    }

    /**
     * Binds an IPv6 socket to ({@code high}, {@code low}) (both 0: any of ours) and {@code port} (0: an ephemeral
     * one); returns the port, or a negated {@link SocketError}. Sharing a port follows {@link #bind}, among IPv6
     * sockets only.
     */
    public int bind6(int socket, long high, long low, int port) {
        final int refused = bind6Refused(socket, high, low);
        if (refused != 0) {
            return refused;
        }
        final int before = flags[socket];
        local6High[socket] = high;
        local6Low[socket] = low;
        if (high != 0 || low != 0) {
            flags[socket] &= ~DUAL_STACK; // bound to an IPv6 address: IPv4 cannot reach it (Linux's rule)
        }
        final int bound = bindPort(socket, port, 0, 0);
        if (bound < 0) {
            flags[socket] = before;
            local6High[socket] = 0;
            local6Low[socket] = 0;
        }
        return bound;
    }

    /** Why {@code socket} cannot be bound to ({@code high}, {@code low}) now, a negated {@link SocketError}; 0: it can. */
    private int bind6Refused(int socket, long high, long low) {
        checkOpen(socket);
        if (localPort[socket] != 0 || !isIpv6(socket)) {
            return -SocketError.INVALID;
        }
        if ((high != 0 || low != 0) && !ipv6.addresses().isOurs(high, low)) {
            return -SocketError.ADDRESS_NOT_AVAILABLE;
        }
        return 0;
    }

    /**
     * The bind of an IPv6 socket's first send or connect, to ({@code remoteHigh}, {@code remoteLow}) port
     * {@code remotePort}: an ephemeral port whose replies from that peer reach this shard, for the source address
     * the stack picks (RFC 6724) unless the socket is bound to one; any free port to a group, as over IPv4.
     */
    private int bind6To(int socket, long remoteHigh, long remoteLow, int remotePort) {
        final int refused = bind6Refused(socket, local6High[socket], local6Low[socket]);
        if (refused != 0) {
            return refused;
        }
        long sourceHigh = local6High[socket];
        long sourceLow = local6Low[socket];
        if (sourceHigh == 0 && sourceLow == 0) {
            final int source = ipv6.addresses().sourceFor(remoteHigh, remoteLow);
            if (source >= 0) {
                sourceHigh = ipv6.addresses().high(source);
                sourceLow = ipv6.addresses().low(source);
            }
        }
        final int port = Ipv6Address.isMulticast(remoteHigh)
            ? ephemeralPort(0, 0) : ephemeralPort6(sourceHigh, sourceLow, remoteHigh, remoteLow, remotePort);
        return port == 0 ? -SocketError.ADDRESS_NOT_AVAILABLE : bindPort(socket, port, 0, 0);
    }

    /** The port half of a bind, the local address already set; a failed bind leaves the socket unbound. */
    private int bindPort(int socket, int port, int remoteAddress, int remotePort) {
        if (port == 0) {
            port = ephemeralPort(remoteAddress, remotePort);
            if (port == 0) {
                return -SocketError.ADDRESS_NOT_AVAILABLE;
            }
        } else {
            for (int other : byPort.getOrDefault(port, NO_SOCKETS)) {
                final boolean shared = (flags[socket] & REUSE_ADDRESS) != 0 && (flags[other] & REUSE_ADDRESS) != 0;
                if (localAddressesOverlap(socket, other) && !shared) {
                    return -SocketError.ADDRESS_IN_USE;
                }
            }
        }
        localPort[socket] = port;
        final int[] bound = byPort.getOrDefault(port, NO_SOCKETS);
        final int[] more = Arrays.copyOf(bound, bound.length + 1);
        more[bound.length] = socket;
        byPort.put(port, more);
        return port;
    }

    /**
     * Two sockets that take one family and whose local addresses in it are the same or either is any: an IPv4 and an
     * IPv6-only socket never collide, a dual-stack one collides with both (its IPv4 address is any).
     */
    private boolean localAddressesOverlap(int a, int b) {
        if (isIpv6(a) && isIpv6(b)
            && ((local6High[a] == 0 && local6Low[a] == 0) || (local6High[b] == 0 && local6Low[b] == 0)
            || (local6High[a] == local6High[b] && local6Low[a] == local6Low[b]))) {
            return true;
        }
        return takesIpv4(a) && takesIpv4(b)
            && (localAddress[a] == 0 || localAddress[b] == 0 || localAddress[a] == localAddress[b]);
    }

    private boolean isIpv6(int socket) {
        return (flags[socket] & IPV6) != 0;
    }

    /** An IPv4 socket, or a dual-stack one still bound to the IPv6 wildcard. */
    private boolean takesIpv4(int socket) {
        return (flags[socket] & (IPV6 | DUAL_STACK)) != IPV6;
    }

    /** Whether the socket takes IPv4 datagrams and sends IPv4 records: an IPv4 one, or dual-stack on the wildcard. */
    public boolean takesIpv4Datagrams(int socket) {
        checkOpen(socket);
        return takesIpv4(socket);
    }

    /** Whether the socket is an IPv6 one ({@link #open6}). */
    public boolean ipv6(int socket) {
        checkOpen(socket);
        return isIpv6(socket);
    }

    /**
     * On a shard of a sharded stack, a socket's ephemeral port is one of {@code ports} for its first peer (the one
     * it connects to, or its first datagram's destination), as TCP's active opens. Cold path.
     */
    public void shardPorts(ShardPorts ports) {
        shardPorts = java.util.Objects.requireNonNull(ports);
    }

    /**
     * The next free port of the range, in turn; with a peer known ({@code remoteAddress} not 0) on a shard of several,
     * the next that also steers that peer's replies here (about one in the shard count). 0 when none is left.
     */
    private int ephemeralPort(int remoteAddress, int remotePort) {
        final int range = config.ephemeralLast() - config.ephemeralFirst() + 1;
        final int us = ipv4.address().address();
        for (int tries = 0; tries < range; tries++) {
            final int port = nextEphemeral;
            nextEphemeral = port == config.ephemeralLast() ? config.ephemeralFirst() : port + 1;
            if (!byPort.containsKey(port)
                && (remoteAddress == 0 || shardPorts.repliesReach(us, port, remoteAddress, remotePort))) {
                return port;
            }
        }
        return 0;
    }

    /** {@link #ephemeralPort} for an IPv6 peer, steered as the link steers its replies to ({@code localHigh}, ...). */
    private int ephemeralPort6(long localHigh, long localLow, long remoteHigh, long remoteLow, int remotePort) {
        final int range = config.ephemeralLast() - config.ephemeralFirst() + 1;
        for (int tries = 0; tries < range; tries++) {
            final int port = nextEphemeral;
            nextEphemeral = port == config.ephemeralLast() ? config.ephemeralFirst() : port + 1;
            if (!byPort.containsKey(port)
                && shardPorts.repliesReach6(localHigh, localLow, port, remoteHigh, remoteLow, remotePort)) {
                return port;
            }
        }
        return 0;
    }

    /** Sets the default peer; datagrams from others are no longer received (binds an ephemeral port if needed). */
    public int connect(int socket, int address, int port) {
        checkOpen(socket);
        if (address == 0 || port == 0 || port > 65535 || !takesIpv4(socket)) {
            return -SocketError.INVALID;
        }
        if (localPort[socket] == 0) {
            final int bound = bindAny(socket, address, port);
            if (bound < 0) {
                return bound;
            }
        }
        remoteAddress[socket] = address;
        remote6High[socket] = 0;
        remote6Low[socket] = 0;
        remotePort[socket] = port;
        pendingError.set(socket, SocketError.NONE);
        return SocketError.NONE;
    }

    /** {@link #connect} for an IPv6 socket. */
    public int connect6(int socket, long high, long low, int port) {
        checkOpen(socket);
        if ((high == 0 && low == 0) || port == 0 || port > 65535 || !isIpv6(socket)) {
            return -SocketError.INVALID;
        }
        if (localPort[socket] == 0) {
            final int bound = bind6To(socket, high, low, port);
            if (bound < 0) {
                return bound;
            }
        }
        remoteAddress[socket] = 0;
        remote6High[socket] = high;
        remote6Low[socket] = low;
        remotePort[socket] = port;
        pendingError.set(socket, SocketError.NONE);
        return SocketError.NONE;
    }

    /**
     * Binds an unbound socket to the wildcard of its family and an ephemeral port, before its first send or its
     * connect; the first peer ({@code remoteAddress} 0: none or IPv6) steers the port on a shard of several.
     */
    private int bindAny(int socket, int remoteAddress, int remotePort) {
        if (!isIpv6(socket)) {
            return bind(socket, 0, 0, remoteAddress, remotePort);
        }
        // A dual-stack socket's first IPv4 peer steers its port as an IPv4 socket's would.
        final int refused = bind6Refused(socket, local6High[socket], local6Low[socket]);
        return refused != 0 ? refused : bindPort(socket, 0, remoteAddress, remotePort);
    }

    public void disconnect(int socket) {
        checkOpen(socket);
        remoteAddress[socket] = 0;
        remotePort[socket] = 0;
        remote6High[socket] = 0;
        remote6Low[socket] = 0;
    }

    public void reuseAddress(int socket, boolean enabled) {
        setFlag(socket, REUSE_ADDRESS, enabled);
    }

    private void setFlag(int socket, int flag, boolean enabled) {
        checkOpen(socket);
        flags[socket] = enabled ? flags[socket] | flag : flags[socket] & ~flag;
    }

    /**
     * Records that {@code socket} receives {@code group} with a source filter ({@link #INCLUDE} only the sources,
     * or {@link #EXCLUDE} all but them; EXCLUDE with no sources is any-source). Replaces an earlier filter for the
     * group. The interface-level membership (IGMP) is the caller's.
     */
    public void join(int socket, int group, int mode, int[] sources) {
        checkOpen(socket);
        final int at = groupIndex(socket, group);
        if (at >= 0) {
            groupModes[socket][at] = mode;
            groupSources[socket][at] = sources.clone();
            return;
        }
        final int n = groups[socket].length;
        groups[socket] = Arrays.copyOf(groups[socket], n + 1);
        groupModes[socket] = Arrays.copyOf(groupModes[socket], n + 1);
        groupSources[socket] = Arrays.copyOf(groupSources[socket], n + 1);
        groups[socket][n] = group;
        groupModes[socket][n] = mode;
        groupSources[socket][n] = sources.clone();
    }

    /** Forgets the socket's membership of {@code group}; returns whether it had one. */
    public boolean leave(int socket, int group) {
        checkOpen(socket);
        final int at = groupIndex(socket, group);
        if (at < 0) {
            return false;
        }
        final int last = groups[socket].length - 1;
        groups[socket][at] = groups[socket][last];
        groupModes[socket][at] = groupModes[socket][last];
        groupSources[socket][at] = groupSources[socket][last];
        groups[socket] = Arrays.copyOf(groups[socket], last);
        groupModes[socket] = Arrays.copyOf(groupModes[socket], last);
        groupSources[socket] = Arrays.copyOf(groupSources[socket], last);
        return true;
    }

    /**
     * Records that the IPv6 {@code socket} receives the group ({@code high}, {@code low}) from any source; returns
     * false when it had joined it already. The interface-level membership (MLD) is the caller's. Cold path.
     */
    public boolean join6(int socket, long high, long low) {
        checkOpen(socket);
        if (!isIpv6(socket)) {
            throw new IllegalArgumentException("an IPv4 socket joins IPv4 groups");
        }
        if (group6Index(socket, high, low) >= 0) {
            return false;
        }
        final int n = groups6[socket].length;
        groups6[socket] = Arrays.copyOf(groups6[socket], n + 2);
        groups6[socket][n] = high;
        groups6[socket][n + 1] = low;
        return true;
    }

    /** Forgets the socket's membership of the IPv6 group; returns whether it had one. Cold path. */
    public boolean leave6(int socket, long high, long low) {
        checkOpen(socket);
        final int at = group6Index(socket, high, low);
        if (at < 0) {
            return false;
        }
        final long[] joined = groups6[socket];
        joined[at] = joined[joined.length - 2];
        joined[at + 1] = joined[joined.length - 1];
        groups6[socket] = Arrays.copyOf(joined, joined.length - 2);
        return true;
    }

    /** The IPv6 groups the socket joined, high and low words side by side (for leaving them all on close). */
    public long[] groups6(int socket) {
        checkOpen(socket);
        return groups6[socket].clone();
    }

    private int group6Index(int socket, long high, long low) {
        final long[] joined = groups6[socket];
        for (int i = 0; i < joined.length; i += 2) {
            if (joined[i] == high && joined[i + 1] == low) {
                return i;
            }
        }
        return -1;
    }

    /** Groups the socket joined (for leaving them all on close). */
    public int[] groups(int socket) {
        checkOpen(socket);
        return groups[socket].clone();
    }

    /** Closes the socket; queued datagrams to send are dropped. Memberships must have been left. */
    public void close(int socket) {
        refuseInsideHandler("close a socket");
        checkOpen(socket);
        if (localPort[socket] != 0) {
            final int[] bound = byPort.get(localPort[socket]);
            final int[] rest = Arrays.stream(bound).filter(s -> s != socket).toArray();
            if (rest.length == 0) {
                byPort.remove(localPort[socket]);
            } else {
                byPort.put(localPort[socket], rest);
            }
        }
        state[socket] = FREE;
        events[socket] = null;
        receiveHandlers[socket] = null;
        receiveRings[socket] = null;
        sendRings[socket] = null;
        arenas[socket].close();
        arenas[socket] = null;
    }

    private void checkOpen(int socket) {
        if (socket < 0 || socket >= state.length || state[socket] != OPEN) {
            throw new IllegalArgumentException("no open UDP socket " + socket);
        }
    }

    public ByteRing receiveRing(int socket) {
        return receiveRings[socket];
    }

    public ByteRing sendRing(int socket) {
        return sendRings[socket];
    }

    public int localPort(int socket) {
        return localPort[socket];
    }

    public int localAddress(int socket) {
        return localAddress[socket];
    }

    public int remoteAddress(int socket) {
        return remoteAddress[socket];
    }

    public int remotePort(int socket) {
        return remotePort[socket];
    }

    /** An IPv6 socket's local address, high 64 bits (0 with the low half: any). */
    public long localAddressHigh(int socket) {
        return local6High[socket];
    }

    public long localAddressLow(int socket) {
        return local6Low[socket];
    }

    /** A connected IPv6 socket's peer, high 64 bits (0 with the low half: not connected). */
    public long remoteAddressHigh(int socket) {
        return remote6High[socket];
    }

    public long remoteAddressLow(int socket) {
        return remote6Low[socket];
    }

    /**
     * Inside a receive handler's call for an IPv6 socket (which gets 0 as the IPv4 source), the datagram's source
     * address, high 64 bits.
     */
    public long offeredSourceHigh() {
        return offeredSourceHigh;
    }

    public long offeredSourceLow() {
        return offeredSourceLow;
    }

    /** Datagrams dropped because this socket's receive ring was full. */
    public long receiveDrops(int socket) {
        return receiveDrops[socket];
    }

    /** Returns and clears the socket's pending error (from ICMP, or a send that failed), as a {@link SocketError}. */
    public int takeError(int socket) {
        return pendingError.getAndSet(socket, SocketError.NONE);
    }

    /** Peeks at the pending error without clearing it. */
    public int pendingError(int socket) {
        return pendingError.get(socket);
    }

    // ------------------------------------------------------------------------------------------------ input

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        rxDatagrams.incrementRelease();
        rx.wrap(segment, offset, length);
        final int reason = rx.check();
        if (reason != UdpHeader.OK) {
            (reason == UdpHeader.DROP_TOO_SHORT ? dropTooShort : dropBadLength).incrementRelease();
            return;
        }
        final int udpLength = rx.length();
        if (rx.checksum() == 0) {
            rxNoChecksum.incrementRelease(); // RFC 768: the sender computed none; allowed over IPv4
        } else if ((packet.rxFlags() & (Offloads.RX_CHECKSUM_OK | Offloads.RX_CHECKSUM_PARTIAL)) == 0
            && !InternetChecksum.verifies(InternetChecksum.add(InternetChecksum.pseudoHeader(packet.source(),
            packet.destination(), IpProtocol.UDP, udpLength), segment, offset, udpLength))) {
            dropBadChecksum.incrementRelease();
            return;
        }
        final int sourcePort = rx.sourcePort();
        final int destinationPort = rx.destinationPort();
        final int[] bound = byPort.get(destinationPort);
        final long payload = offset + UdpHeader.LENGTH;
        final int payloadLength = udpLength - UdpHeader.LENGTH;
        if (packet.kind() == Ipv4Packet.UNICAST) {
            final int socket = bound == null ? -1 : unicastOwner(bound, packet.destination(), packet.source(), sourcePort);
            if (socket < 0) {
                dropNoSocket.incrementRelease();
                // RFC 1122 §4.1.3.1: a datagram for a port with no listener SHOULD get port unreachable.
                ipv4.icmp().sendError(IcmpHeader.DESTINATION_UNREACHABLE, IcmpHeader.PORT_UNREACHABLE, packet, nowNs);
                return;
            }
            deliver(socket, false, packet.source(), 0, 0, sourcePort, Ipv4Packet.UNICAST, segment, payload,
                payloadLength);
            return;
        }
        int delivered = 0;
        if (bound != null) {
            for (int socket : bound) {
                if (acceptsGroupDatagram(socket, packet, sourcePort)) {
                    deliver(socket, false, packet.source(), 0, 0, sourcePort, packet.kind(), segment, payload,
                        payloadLength);
                    delivered++;
                }
            }
        }
        if (delivered == 0) {
            dropNoSocket.incrementRelease();
        }
    }

    /** A connected socket whose peer is the source wins; else the most recently bound unconnected one. */
    private int unicastOwner(int[] bound, int destination, int source, int sourcePort) {
        int owner = -1;
        for (int socket : bound) {
            if (!takesIpv4(socket) || (localAddress[socket] != 0 && localAddress[socket] != destination)) {
                continue;
            }
            if (remotePort[socket] != 0) {
                if (remoteAddress[socket] == source && remotePort[socket] == sourcePort) {
                    return socket;
                }
            } else {
                owner = socket;
            }
        }
        return owner;
    }

    private boolean acceptsGroupDatagram(int socket, Ipv4Packet packet, int sourcePort) {
        final int destination = packet.destination();
        if (!takesIpv4(socket) || (localAddress[socket] != 0 && localAddress[socket] != destination)) {
            return false;
        }
        if (remotePort[socket] != 0 && (remoteAddress[socket] != packet.source() || remotePort[socket] != sourcePort)) {
            return false;
        }
        if (packet.kind() == Ipv4Packet.BROADCAST) {
            return true;
        }
        return sourceAllowed(socket, destination, packet.source());
    }

    /** The socket joined {@code group} and its filter lets {@code source} through. */
    private boolean sourceAllowed(int socket, int group, int source) {
        final int at = groupIndex(socket, group);
        if (at < 0) {
            return false;
        }
        final int[] sources = groupSources[socket][at];
        boolean listed = false;
        for (int s : sources) {
            if (s == source) {
                listed = true;
                break;
            }
        }
        return groupModes[socket][at] == INCLUDE ? listed : !listed;
    }

    private int groupIndex(int socket, int group) {
        final int[] joined = groups[socket];
        for (int i = 0; i < joined.length; i++) {
            if (joined[i] == group) {
                return i;
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------------------------------------ input, IPv6

    @Override
    public void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        rxDatagrams.incrementRelease();
        rxIpv6Datagrams.incrementRelease();
        rx.wrap(segment, offset, length);
        final int reason = rx.check();
        if (reason != UdpHeader.OK) {
            (reason == UdpHeader.DROP_TOO_SHORT ? dropTooShort : dropBadLength).incrementRelease();
            return;
        }
        final int udpLength = rx.length();
        if (rx.checksum() == 0) {
            dropZeroChecksumIpv6.incrementRelease(); // RFC 8200 §8.1: mandatory over IPv6
            return;
        }
        if ((packet.rxFlags() & (Offloads.RX_CHECKSUM_OK | Offloads.RX_CHECKSUM_PARTIAL)) == 0
            && !InternetChecksum.verifies(InternetChecksum.add(Ipv6Header.pseudoHeaderSum(segment,
            packet.headerOffset(), udpLength, NextHeader.UDP), segment, offset, udpLength))) {
            dropBadChecksum.incrementRelease();
            return;
        }
        final int sourcePort = rx.sourcePort();
        final int[] bound = byPort.get(rx.destinationPort());
        if (packet.multicastDestination()) {
            deliverToMembers6(bound, packet, sourcePort, segment, offset, udpLength);
            return;
        }
        final int socket = bound == null ? -1 : unicastOwner6(bound, packet, sourcePort);
        if (socket < 0) {
            dropNoSocket.incrementRelease();
            ipv6.icmp().portUnreachable(packet, segment, nowNs); // says nothing to a group (RFC 4443 §2.4(e.3))
            return;
        }
        deliver(socket, true, 0, packet.sourceHigh(), packet.sourceLow(), sourcePort, Ipv4Packet.UNICAST, segment,
            offset + UdpHeader.LENGTH, udpLength - UdpHeader.LENGTH);
    }

    /**
     * A datagram to an IPv6 group: to every IPv6 socket on the port that joined it (bound to the wildcard or to the
     * group, connected to its source or not), each its copy; none, and it is counted as for no socket, without an
     * ICMPv6 error (RFC 4443 §2.4(e.3)).
     */
    private void deliverToMembers6(int[] bound, Ipv6Packet packet, int sourcePort, MemorySegment segment, long offset,
                                   int udpLength) {
        boolean delivered = false;
        if (bound != null) {
            final long high = packet.destinationHigh();
            final long low = packet.destinationLow();
            for (int socket : bound) {
                if (boundTo6(socket, packet) && group6Index(socket, high, low) >= 0
                    && (remotePort[socket] == 0 || connectedTo6(socket, packet, sourcePort))) {
                    deliver(socket, true, 0, packet.sourceHigh(), packet.sourceLow(), sourcePort, Ipv4Packet.MULTICAST,
                        segment, offset + UdpHeader.LENGTH, udpLength - UdpHeader.LENGTH);
                    delivered = true;
                }
            }
        }
        if (delivered) {
            rxIpv6MulticastDatagrams.incrementRelease();
        } else {
            dropNoSocket.incrementRelease();
        }
    }

    /** {@link #unicastOwner} among the IPv6 sockets. */
    private int unicastOwner6(int[] bound, Ipv6Packet packet, int sourcePort) {
        int owner = -1;
        for (int socket : bound) {
            if (!boundTo6(socket, packet)) {
                continue;
            }
            if (remotePort[socket] != 0) {
                if (connectedTo6(socket, packet, sourcePort)) {
                    return socket;
                }
            } else {
                owner = socket;
            }
        }
        return owner;
    }

    /** An IPv6 socket bound to the wildcard or to the packet's destination (ours, or a group). */
    private boolean boundTo6(int socket, Ipv6Packet packet) {
        return isIpv6(socket) && (local6High[socket] == 0 && local6Low[socket] == 0
            || local6High[socket] == packet.destinationHigh() && local6Low[socket] == packet.destinationLow());
    }

    /** A connected IPv6 socket whose peer is the packet's source and port. */
    private boolean connectedTo6(int socket, Ipv6Packet packet, int sourcePort) {
        return remotePort[socket] == sourcePort && remote6High[socket] == packet.sourceHigh()
            && remote6Low[socket] == packet.sourceLow();
    }

    /**
     * Hands a datagram to its socket: to its handler in place, or into its receive ring. {@code source} is an IPv4
     * datagram's source; an IPv6 one's ({@code v6}) is ({@code sourceHigh}, {@code sourceLow}). A dual-stack socket
     * queues each in its own family's record.
     */
    private void deliver(int socket, boolean v6, int source, long sourceHigh, long sourceLow, int sourcePort, int kind,
                         MemorySegment segment, long payload, int payloadLength) {
        if (receiveHandlers[socket] != null && deliverQueuedTo(socket)) {
            holds.beginOffer(HELD_DATAGRAMS, socket, segment, payload, payloadLength);
            offeredSourceHigh = sourceHigh;
            offeredSourceLow = sourceLow;
            boolean taken;
            boolean held;
            try {
                taken = callHandler(socket, source, sourcePort, kind, segment, payload, payloadLength);
            } finally {
                held = holds.endOffer();
            }
            if (held) {
                // A held datagram is the application's, whatever the handler returned.
                rxHeldDatagrams.incrementRelease();
                taken = true;
            }
            if (taken) {
                // Zero-copy receive: taken in place, never copied by the stack.
                rxZeroCopyDatagrams.incrementRelease();
                return;
            }
        }
        final boolean queued = v6
            ? inbound.offer6(receiveRings[socket], sourceHigh, sourceLow, sourcePort, kind, 0, segment, payload,
                payloadLength)
            : inbound.offer(receiveRings[socket], source, sourcePort, kind, segment, payload, payloadLength);
        if (!queued) {
            receiveDrops[socket]++;
            dropReceiveQueueFull.incrementRelease();
            return;
        }
        rxCopiedDatagrams.incrementRelease();
        events[socket].readable(socket);
    }

    // ------------------------------------------------------------------------------------ zero-copy receive

    /**
     * Sets (or with null removes) the socket's zero-copy receive handler ({@link UdpReceiveHandler}); from then on the
     * handler, on the stack thread, is the receive ring's only reader: the owner must not receive from the ring while
     * a handler is set. Datagrams already queued are offered to the new handler at once. Refused inside a handler.
     */
    public void receiveHandler(int socket, UdpReceiveHandler handler) {
        refuseInsideHandler("change a receive handler");
        checkOpen(socket);
        receiveHandlers[socket] = handler;
        if (handler != null) {
            deliverQueuedTo(socket);
        }
    }

    /**
     * Held-frame zero-copy receive: from inside the socket's receive handler, keeps the datagram it is being offered
     * readable after the handler returns, in the link's frame, until {@link FrameHolds#release} of the hold returned
     * here (any thread, once); the datagram counts as taken whatever the handler returns. Returns -1, changing
     * nothing, where it cannot be held: it is offered from the receive ring (queued before) or was reassembled from
     * fragments, it was held already, or the link does not lend the frame ({@link
     * dev.tern.ethernet.link.Link#lendFrame}). Held datagrams take none of the socket's receive buffer: what bounds
     * them is what the link lends (a quarter of its receive buffers).
     */
    public long holdOffered(int socket) {
        return holds.holdOffer(HELD_DATAGRAMS, socket);
    }

    /** The owner of a receive handler can take more: offers it the queued datagrams, oldest first. */
    public void deliverQueued(int socket) {
        if (socket >= 0 && socket < state.length && state[socket] == OPEN && receiveHandlers[socket] != null
            && !inReceiveHandler) {
            deliverQueuedTo(socket);
        }
    }

    /** Offers the ring's datagrams to the socket's handler until it declines one; true when the ring is empty. */
    private boolean deliverQueuedTo(int socket) {
        final ByteRing ring = receiveRings[socket];
        while (queued.peek(ring)) {
            final int length = queued.length();
            final long position = ring.consumerPosition() + queued.headerLength();
            final MemorySegment data;
            final long offset;
            if (length <= ring.contiguous(position)) {
                data = ring.memory();
                offset = ring.index(position);
            } else {
                queued.copyPayload(ring, joined, 0, length);
                data = joined;
                offset = 0;
            }
            offeredSourceHigh = queued.addressHigh();
            offeredSourceLow = queued.addressLow();
            if (!callHandler(socket, queued.address(), queued.port(), queued.kind(), data, offset, length)) {
                return false;
            }
            queued.consume(ring);
            rxHandlerRingDatagrams.incrementRelease();
        }
        return true;
    }

    private boolean callHandler(int socket, int source, int sourcePort, int kind, MemorySegment data, long offset,
                                int length) {
        inReceiveHandler = true;
        try {
            return receiveHandlers[socket].onDatagram(socket, source, sourcePort, kind, data, offset, length);
        } catch (RuntimeException e) {
            // The application's bug, not the stack's: counted, and the datagram stays queued.
            rxHandlerErrors.incrementRelease();
            return false;
        } finally {
            inReceiveHandler = false;
        }
    }

    private void refuseInsideHandler(String what) {
        if (inReceiveHandler) {
            throw new IllegalStateException("cannot " + what + " from inside a receive handler: return first");
        }
    }

    @Override
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                            int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
        if (length < UdpHeader.LENGTH) {
            return;
        }
        icmpErrors.incrementRelease();
        rx.wrap(segment, offset, length);
        final int[] bound = byPort.get(rx.sourcePort());
        if (bound == null) {
            return;
        }
        final int error = errorFor(type, code);
        for (int socket : bound) {
            // Like Linux without IP_RECVERR: only a connected socket learns of errors, on its next call.
            if (takesIpv4(socket) && remoteAddress[socket] == originalDestination
                && remotePort[socket] == rx.destinationPort() && error != SocketError.NONE) {
                pendingError.set(socket, error);
                events[socket].readable(socket);
            }
        }
    }

    @Override
    public void onIcmpError(int type, int code, long sourceHigh, long sourceLow, long destinationHigh,
                            long destinationLow, MemorySegment segment, long offset, int length, long nowNs) {
        if (length < UdpHeader.LENGTH) {
            return;
        }
        final int error = errorFor6(type, code);
        if (error == SocketError.NONE) {
            return;
        }
        icmpErrors.incrementRelease();
        rx.wrap(segment, offset, length);
        final int[] bound = byPort.get(rx.sourcePort());
        if (bound == null) {
            return;
        }
        for (int socket : bound) {
            // As for IPv4: only a connected socket learns of errors.
            if (isIpv6(socket) && remote6High[socket] == destinationHigh && remote6Low[socket] == destinationLow
                && remotePort[socket] == rx.destinationPort()) {
                pendingError.set(socket, error);
                events[socket].readable(socket);
            }
        }
    }

    /** ICMPv6 errors as Linux's {@code icmpv6_err_convert} maps them (RFC 4443 §3). */
    private static int errorFor6(int type, int code) {
        return switch (type) {
            case Icmpv6Header.DESTINATION_UNREACHABLE -> switch (code) {
                case Icmpv6Header.PORT_UNREACHABLE -> SocketError.CONNECTION_REFUSED;
                case Icmpv6Header.NO_ROUTE -> SocketError.NET_UNREACHABLE;
                default -> SocketError.HOST_UNREACHABLE;
            };
            case Icmpv6Header.PARAMETER_PROBLEM -> SocketError.PROTOCOL_ERROR;
            case Icmpv6Header.TIME_EXCEEDED -> SocketError.HOST_UNREACHABLE;
            default -> SocketError.NONE; // packet too big: the path MTU cache learned it, and IPv6 fragments
        };
    }

    private static int errorFor(int type, int code) {
        if (type == IcmpHeader.DESTINATION_UNREACHABLE) {
            return switch (code) {
                case IcmpHeader.PORT_UNREACHABLE, IcmpHeader.PROTOCOL_UNREACHABLE -> SocketError.CONNECTION_REFUSED;
                case IcmpHeader.NET_UNREACHABLE -> SocketError.NET_UNREACHABLE;
                case IcmpHeader.FRAGMENTATION_NEEDED -> SocketError.NONE; // the path MTU cache learned it; IP fragments
                default -> SocketError.HOST_UNREACHABLE;
            };
        }
        return type == IcmpHeader.PARAMETER_PROBLEM ? SocketError.PROTOCOL_ERROR : SocketError.NONE;
    }

    // ----------------------------------------------------------------------------------------------- output

    /**
     * Sends the datagrams waiting in the socket's send ring. Stops, keeping the rest for the next poll, when the
     * link has no buffer; a datagram that cannot be sent at all is dropped and its error left pending. Returns how
     * many left.
     */
    public int flush(int socket, long nowNs) {
        if (state[socket] != OPEN) {
            return 0;
        }
        final ByteRing ring = sendRings[socket];
        int sent = 0;
        while (outbound.peek(ring)) {
            final int length = outbound.length();
            final int port = outbound.port() != 0 ? outbound.port() : remotePort[socket];
            final int error;
            final boolean toPeer = outbound.ipv6() ? outbound.addressHigh() == 0 && outbound.addressLow() == 0
                : outbound.address() == 0;
            // A record for the connected peer goes in the peer's family (a dual-stack socket may be connected to
            // either); any other in its own, which the socket must take.
            final boolean ipv4Out = toPeer ? remoteAddress[socket] != 0 : !outbound.ipv6();
            if (ipv4Out ? !takesIpv4(socket) : !isIpv6(socket)) {
                error = SocketError.INVALID;
            } else if (!ipv4Out) {
                error = send6(socket, ring, toPeer ? remote6High[socket] : outbound.addressHigh(),
                    toPeer ? remote6Low[socket] : outbound.addressLow(), port, length, outbound.ttl(), nowNs);
            } else {
                final int destination = toPeer ? remoteAddress[socket] : outbound.address();
                error = send(socket, ring, destination, port, length, outbound.flags(), outbound.ttl(), nowNs);
            }
            if (error == SocketError.NO_BUFFER) {
                break;
            }
            if (error != SocketError.NONE) {
                txErrors.incrementRelease();
                pendingError.set(socket, error);
                events[socket].readable(socket);
            } else {
                sent++;
            }
            outbound.consume(ring);
        }
        if (sent > 0) {
            events[socket].writable(socket);
        }
        return sent;
    }

    private int send(int socket, ByteRing ring, int destination, int port, int length, int sendFlags, int ttl,
                     long nowNs) {
        if (destination == 0 || port == 0) {
            return SocketError.INVALID;
        }
        final boolean multicast = Ipv4Address.isMulticast(destination);
        if ((destination == Ipv4Address.LIMITED_BROADCAST || destination == ipv4.address().broadcast())
            && (sendFlags & DatagramRecords.SEND_BROADCAST) == 0) {
            return SocketError.BROADCAST_NOT_ENABLED;
        }
        // A group or broadcast destination names no one peer whose replies could be steered: any port will do.
        final boolean onePeer = !multicast && destination != Ipv4Address.LIMITED_BROADCAST
            && destination != ipv4.address().broadcast();
        if (localPort[socket] == 0 && bindAny(socket, onePeer ? destination : 0, port) < 0) {
            return SocketError.ADDRESS_NOT_AVAILABLE;
        }
        final int udpLength = UdpHeader.LENGTH + length;
        final int result = ipv4.begin(0, destination, IpProtocol.UDP, udpLength, multicast ? ttl : 0,
            0, false, nowNs);
        if (result != Ipv4Layer.OK) {
            return switch (result) {
                case Ipv4Layer.ERR_NO_BUFFER -> SocketError.NO_BUFFER;
                case Ipv4Layer.ERR_NO_ROUTE -> SocketError.NET_UNREACHABLE;
                case Ipv4Layer.ERR_MESSAGE_TOO_LONG -> SocketError.MESSAGE_TOO_LONG;
                default -> SocketError.ADDRESS_NOT_AVAILABLE;
            };
        }
        final MemorySegment out = ipv4.segment();
        final long at = ipv4.payloadOffset();
        outbound.copyPayload(ring, out, at + UdpHeader.LENGTH, length);
        tx.wrap(out, at, udpLength).sourcePort(localPort[socket]).destinationPort(port).length(udpLength).checksum(0);
        final long pseudo = InternetChecksum.pseudoHeader(ipv4.address().address(), destination, IpProtocol.UDP, udpLength);
        if (ipv4.l4ChecksumOffload()) {
            tx.checksum(InternetChecksum.fold(pseudo));
            ipv4.requestL4Checksum(UdpHeader.CHECKSUM_OFFSET);
        } else {
            final int checksum = InternetChecksum.finish(InternetChecksum.add(pseudo, out, at, udpLength));
            // RFC 768: a computed checksum of zero is sent as all ones (zero means "no checksum").
            tx.checksum(checksum == 0 ? 0xFFFF : checksum);
        }
        ipv4.commit();
        txDatagrams.incrementRelease();
        if (multicast && (sendFlags & DatagramRecords.SEND_MULTICAST_LOOP) != 0) {
            loopMulticast(ring, destination, localPort[socket], port, length);
        }
        return SocketError.NONE;
    }

    /**
     * Sends one IPv6 datagram: from the bound address, or the one RFC 6724 picks; to a group with the record's hop
     * limit (1 when it gives none, as {@code IPV6_MULTICAST_HOPS}), else the stack's. The checksum is always computed
     * (RFC 8200 §8.1).
     */
    private int send6(int socket, ByteRing ring, long high, long low, int port, int length, int hops, long nowNs) {
        if ((high == 0 && low == 0) || port == 0) {
            return SocketError.INVALID;
        }
        if (localPort[socket] == 0 && bind6To(socket, high, low, port) < 0) {
            return SocketError.ADDRESS_NOT_AVAILABLE;
        }
        final int udpLength = UdpHeader.LENGTH + length;
        final int hopLimit = Ipv6Address.isMulticast(high) ? (hops != 0 ? hops : 1) : ipv6.hopLimit();
        final boolean anySource = local6High[socket] == 0 && local6Low[socket] == 0;
        final int result = anySource
            ? ipv6.begin(high, low, NextHeader.UDP, udpLength, hopLimit, 0, nowNs)
            : ipv6.beginFrom(local6High[socket], local6Low[socket], high, low, NextHeader.UDP, udpLength, hopLimit, 0,
                nowNs);
        if (result != Ipv6Layer.OK) {
            return switch (result) {
                case Ipv6Layer.ERR_NO_BUFFER -> SocketError.NO_BUFFER;
                case Ipv6Layer.ERR_NO_ROUTE -> SocketError.NET_UNREACHABLE;
                case Ipv6Layer.ERR_MESSAGE_TOO_LONG -> SocketError.MESSAGE_TOO_LONG;
                default -> SocketError.ADDRESS_NOT_AVAILABLE;
            };
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset();
        outbound.copyPayload(ring, out, at + UdpHeader.LENGTH, length);
        tx.wrap(out, at, udpLength).sourcePort(localPort[socket]).destinationPort(port).length(udpLength).checksum(0);
        final int checksum = InternetChecksum.finish(InternetChecksum.add(ipv6.pseudoHeaderSum(), out, at, udpLength));
        tx.checksum(checksum == 0 ? 0xFFFF : checksum); // zero would mean none, which IPv6 forbids
        ipv6.commit();
        txDatagrams.incrementRelease();
        txIpv6Datagrams.incrementRelease();
        return SocketError.NONE;
    }

    /** Gives local members of {@code group} a copy of our own multicast datagram (IP_MULTICAST_LOOP). */
    private void loopMulticast(ByteRing ring, int group, int sourcePort, int port, int length) {
        final int[] bound = byPort.get(port);
        if (bound == null) {
            return;
        }
        final int source = ipv4.address().address();
        boolean copied = false;
        for (int socket : bound) {
            if (takesIpv4(socket) && (localAddress[socket] == 0 || localAddress[socket] == group)
                && sourceAllowed(socket, group, source)) {
                if (!copied) {
                    outbound.copyPayload(ring, scratch, 0, length);
                    copied = true;
                }
                deliver(socket, false, source, 0, 0, sourcePort, 2, scratch, 0, length);
            }
        }
    }

    public void close() {
        for (int s = 0; s < state.length; s++) {
            if (state[s] == OPEN) {
                close(s);
            }
        }
        scratchArena.close();
    }
}
