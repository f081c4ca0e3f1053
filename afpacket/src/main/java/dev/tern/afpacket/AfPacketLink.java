package dev.tern.afpacket;

import dev.tern.afpacket.libc.LibcException;
import dev.tern.afpacket.libc.LinuxAbi;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.sys.EventCounterWake;
import dev.tern.core.sys.Libc;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Objects;

/**
 * A {@link Link} on a Linux network interface through two AF_PACKET sockets with memory-mapped rings: a TPACKET_V3
 * receive ring ({@link RxRing}: blocks of variable-size frames, handed to the stack in place) and a TPACKET_V2
 * transmit ring ({@link TxRing}: fixed slots the stack writes into, one {@code sendto} per flush, with
 * {@code PACKET_QDISC_BYPASS} unless the vnet header is on). It works on any Ethernet interface; the tests use a
 * veth pair between two network namespaces (testkit's {@code NetnsHarness}).
 *
 * <pre>
 *   stack shard thread
 *     | receive(handler, n)                       | claim / commit ... / flush
 *     v                                           v
 *   RX socket (ETH_P_ALL, IGNORE_OUTGOING)      TX socket (protocol 0: receives nothing)
 *   TPACKET_V3 ring: block_nr x block_size      TPACKET_V2 ring: frame_nr x frame_size, LOSS
 *     ^ kernel fills blocks                       | sendto(MSG_DONTWAIT) -> dev_direct_xmit (QDISC_BYPASS)
 *     |                                           |   or dev_queue_xmit (vnet header: GSO needs the qdisc path)
 *   ------------------------------ interface (veth, NIC) ------------------------------
 * </pre>
 *
 * <h2>Offloads</h2>
 * With {@link AfPacketOptions#vnetHeader} ({@code PACKET_VNET_HDR}) the link reports {@link Offloads#TX_L4_CHECKSUM},
 * {@link Offloads#TX_TCP_SEGMENTATION} and {@link Offloads#RX_CHECKSUM}. On transmit it writes a
 * {@code virtio_net_hdr} before each frame from {@link TxFrame#checksumStart()}/{@link TxFrame#checksumOffset()}
 * ({@code NEEDS_CSUM}) and {@link TxFrame#segmentSize()} ({@code GSO_TCPV4}/{@code GSO_TCPV6}, {@code gso_size} =
 * MSS, {@code hdr_len} = headers through TCP); the kernel completes the checksum and segments (in software if the
 * interface cannot). On receive a frame the kernel marks {@code CHECKSUM_PARTIAL} (a local sender, e.g. a veth peer
 * with checksum offload on) carries {@link Offloads#RX_CHECKSUM_PARTIAL}, and a verified one
 * {@link Offloads#RX_CHECKSUM_OK}. These per-frame flags come from {@code tp_status} in both modes, because a veth
 * peer sends partial checksums whatever this link asks for.
 *
 * <p><b>Received GSO super-frames</b>: a local sender's TCP or UDP GSO packet crosses a veth unsegmented and
 * arrives as <em>one frame larger than the MTU</em> (up to 64 KiB), in both modes. The link hands it up whole; the
 * stack must accept an IPv4 packet whose total length exceeds the MTU from this link (or the peer's TSO/GSO is
 * turned off with {@code ethtool -K}). Frames larger than a receive block are counted in
 * {@link AfPacketStats#rxTruncated()} and dropped.
 *
 * <p>Without the vnet header no offload is reported and frames go out as written. If the stack still requests a
 * checksum, the link computes it in software; it refuses a segmentation request ({@link AfPacketStats#txRejected()}).
 *
 * <h2>Threads and memory</h2>
 * Owned by one shard thread; not thread-safe. It may be opened on another thread (the namespace harness opens it
 * inside a namespace) and handed over. A received frame lives in the ring and is valid until the handler returns; a
 * claimed TX buffer is ring memory until commit or abort. After {@link #close()} every ring segment is invalid
 * (access throws instead of reading unmapped memory).
 *
 * <p>Latency note: a V3 block reaches user space when it fills or when {@link AfPacketOptions#rxBlockTimeoutMs}
 * (default 1 ms) expires, so under light load a frame can wait up to that long in the kernel.
 */
public final class AfPacketLink implements Link {
    private static final int RX_FRAME_SIZE = 2048;
    private static final int TX_BLOCK_SIZE = 64 * 1024;
    private static final int TX_VNET_BLOCK_SIZE = 1024 * 1024;
    /** The largest frame a TSO request can describe: Ethernet + 802.1Q + a 64 KiB IP packet. */
    private static final int MAX_SEGMENTATION_FRAME = LinuxAbi.ETH_HLEN + 4 + 0xFFFF;
    private static final int DEFAULT_TX_FRAMES = 256;
    private static final int DEFAULT_TX_FRAMES_VNET = 64;

    private final String interfaceName;
    private final int interfaceIndex;
    private final long interfaceMac;
    private final long mac;
    private final int mtu;
    private final boolean vnetHeader;
    private final Resources resources;
    private final MemorySegment callState;
    private final MemorySegment synShedProgram;
    private final MemorySegment detachArgument;
    private boolean sheddingSyns;
    /** The sources whose SYNs the attached filter drops: the first {@link #shedSourceCount}. */
    private final int[] shedSources = new int[SynShedFilter.MAX_SOURCES];
    private int shedSourceCount;
    private final MemorySegment pollFd;
    /** Waits that another thread's wake ended ({@link #wakeAwaitingThread}). Owner thread. */
    private long woken;
    /** The event counter polled beside the socket, for another thread to wake the owner. */
    private final EventCounterWake wake;
    private final MemorySegment kernelStats;
    private final MemorySegment kernelStatsLength;
    private final MemorySegment membership;
    private final ReceiveRing rx;
    private final TxRing tx;

    private long kernelPackets;
    private long kernelDrops;
    private long kernelFreezes;
    private boolean closed;

    private AfPacketLink(String interfaceName, int interfaceIndex, long interfaceMac, long mac, int mtu, boolean vnetHeader,
                         Resources resources, ReceiveRing rx, TxRing tx) {
        this.interfaceName = interfaceName;
        this.interfaceIndex = interfaceIndex;
        this.interfaceMac = interfaceMac;
        this.mac = mac;
        this.mtu = mtu;
        this.vnetHeader = vnetHeader;
        this.resources = resources;
        this.rx = rx;
        this.tx = tx;
        final Arena arena = resources.arena;
        this.callState = resources.callState;
        this.pollFd = EventCounterWake.pollFds(arena);
        this.wake = new EventCounterWake(resources.eventFd, arena);
        this.kernelStats = arena.allocate(LinuxAbi.TPACKET_STATS_V3_SIZE, 8);
        this.kernelStatsLength = arena.allocate(ValueLayout.JAVA_INT);
        this.membership = arena.allocate(LinuxAbi.PACKET_MREQ_SIZE, 8);
        this.synShedProgram = SocketFilters.fprog(arena, SynShedFilter.PROGRAM);
        this.detachArgument = arena.allocate(ValueLayout.JAVA_INT);
    }

    /** Opens a link on {@code interfaceName} with {@link AfPacketOptions#defaults()}. */
    public static AfPacketLink open(String interfaceName) {
        return open(interfaceName, AfPacketOptions.defaults());
    }

    /**
     * Opens {@code shards} links on {@code interfaceName}, one per shard of a sharded stack, in one fanout group of a
     * number of this process's own that runs Tern's steering program ({@link AfPacketOptions#fanoutSteering}), in
     * shard order (the group's order). If one cannot be opened, those already open are closed and its failure thrown.
     */
    public static AfPacketLink[] openFanoutGroup(String interfaceName, AfPacketOptions options, int shards) {
        // A group is per network namespace and interface; pid and time make a clash with another process unlikely.
        final int group = (int) ((ProcessHandle.current().pid() ^ System.nanoTime()) & 0xFFFF);
        final AfPacketOptions steered = options.fanoutSteering(group, shards);
        final AfPacketLink[] links = new AfPacketLink[shards];
        try {
            for (int k = 0; k < shards; k++) {
                links[k] = open(interfaceName, steered);
            }
            return links;
        } catch (RuntimeException e) {
            for (AfPacketLink link : links) {
                if (link != null) {
                    link.close();
                }
            }
            throw e;
        }
    }

    /**
     * Opens a link on {@code interfaceName} in the calling thread's network namespace.
     *
     * @throws LinkOpenException with a one-line message when the interface is missing or down, the process lacks
     *                           CAP_NET_RAW, or the kernel refuses the rings
     */
    public static AfPacketLink open(String interfaceName, AfPacketOptions options) {
        Objects.requireNonNull(interfaceName, "interfaceName");
        Objects.requireNonNull(options, "options");
        if (!isValidInterfaceName(interfaceName)) {
            throw LinkOpenException.invalidName(interfaceName);
        }
        final Resources resources = new Resources();
        try {
            return openWith(interfaceName, options, resources);
        } catch (LibcException e) {
            resources.release();
            throw LinkOpenException.failed(interfaceName, e);
        } catch (RuntimeException | Error e) {
            resources.release();
            throw e;
        }
    }

    static boolean isValidInterfaceName(String name) {
        if (name.isEmpty() || name.length() >= LinuxAbi.IFNAMSIZ || name.equals(".") || name.equals("..")) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            final char c = name.charAt(i);
            if (c <= ' ' || c > '~' || c == '/' || c == ':') {
                return false;
            }
        }
        return true;
    }

    private static AfPacketLink openWith(String interfaceName, AfPacketOptions options, Resources resources) {
        final Arena arena = resources.arena;
        final MemorySegment state = resources.callState;
        final int index = Libc.ifNameToIndex(state, arena.allocateFrom(interfaceName));
        if (index == 0) {
            throw LinkOpenException.noSuchInterface(interfaceName);
        }
        // Protocol 0: receive nothing until bind, which comes after the ring exists (rawqp.md §4.1 step 3).
        resources.rxFd = LibcException.check("socket(AF_PACKET, SOCK_RAW)",
            Libc.socket(state, LinuxAbi.AF_PACKET, LinuxAbi.SOCK_RAW | LinuxAbi.SOCK_CLOEXEC, 0), state);

        // An event counter beside the socket in awaitFrames' poll, for another thread to wake the owner.
        resources.eventFd = LibcException.check("eventfd",
            Libc.eventfd(state, 0, LinuxAbi.EFD_NONBLOCK | LinuxAbi.EFD_CLOEXEC), state);

        final MemorySegment request = arena.allocate(LinuxAbi.IFREQ_SIZE, 8);
        final int flags = interfaceQuery(resources, request, interfaceName, LinuxAbi.SIOCGIFFLAGS, "ioctl(SIOCGIFFLAGS)")
            .get(ValueLayout.JAVA_SHORT, LinuxAbi.IFREQ_UNION_OFFSET);
        if ((flags & LinuxAbi.IFF_UP) == 0) {
            throw LinkOpenException.interfaceDown(interfaceName);
        }
        interfaceQuery(resources, request, interfaceName, LinuxAbi.SIOCGIFHWADDR, "ioctl(SIOCGIFHWADDR)");
        final int hardwareType = Short.toUnsignedInt(request.get(ValueLayout.JAVA_SHORT, LinuxAbi.IFREQ_UNION_OFFSET));
        if (hardwareType != LinuxAbi.ARPHRD_ETHER) {
            throw LinkOpenException.notEthernet(interfaceName, hardwareType);
        }
        final long interfaceMac = BigEndian.u48(request, LinuxAbi.IFREQ_HWADDR_DATA_OFFSET);
        final int mtu = interfaceQuery(resources, request, interfaceName, LinuxAbi.SIOCGIFMTU, "ioctl(SIOCGIFMTU)")
            .get(ValueLayout.JAVA_INT, LinuxAbi.IFREQ_UNION_OFFSET);

        final ReceiveRing rx = openReceiveRing(resources, index, options, mtu);
        final TxRing tx = openTransmitRing(resources, index, options, mtu);
        final long mac = options.mac() == AfPacketOptions.INTERFACE_MAC ? interfaceMac : options.mac();
        final AfPacketLink link = new AfPacketLink(interfaceName, index, interfaceMac, mac, mtu, options.vnetHeader(), resources, rx, tx);
        if (mac != interfaceMac) {
            // rawqp.md §4.1 item 7: a NIC filters unicast by its own MAC; ask it to accept ours too.
            link.membership(LinuxAbi.PACKET_ADD_MEMBERSHIP, LinuxAbi.PACKET_MR_UNICAST, mac, "PACKET_MR_UNICAST");
        }
        if (options.promiscuous()) {
            link.membership(LinuxAbi.PACKET_ADD_MEMBERSHIP, LinuxAbi.PACKET_MR_PROMISC, 0, "PACKET_MR_PROMISC");
        }
        return link;
    }

    private static MemorySegment interfaceQuery(Resources resources, MemorySegment request, String name, long command, String call) {
        request.fill((byte) 0);
        MemorySegment.copy(resources.arena.allocateFrom(name), 0, request, LinuxAbi.IFREQ_NAME_OFFSET, name.length());
        LibcException.check(call, Libc.ioctl(resources.callState, resources.rxFd, command, request), resources.callState);
        return request;
    }

    /**
     * A frame-ring slot for any frame this interface can hand over: not the MTU but 64 KiB, because a local sender
     * with GSO (a veth peer) and a NIC with GRO both give packet sockets merged frames of up to 64 KiB; a slot sized
     * for the MTU would drop every one of them. Aligned to TPACKET_ALIGNMENT (16).
     */
    static int frameSlotFor(boolean vnetHeader) {
        final int needed = 65535 + LinuxAbi.ETH_HLEN + 4 + LinuxAbi.TPACKET2_HDRLEN + 32
            + (vnetHeader ? LinuxAbi.VIRTIO_NET_HDR_SIZE : 0);
        return (needed + LinuxAbi.TPACKET_ALIGNMENT - 1) & -LinuxAbi.TPACKET_ALIGNMENT;
    }

    /** The smallest power of two, at least 2048, that holds a frame of {@code mtu} with its ring header and a VLAN tag. */
    static int frameSlotForMtu(int mtu, boolean vnetHeader) {
        final int needed = mtu + LinuxAbi.ETH_HLEN + 4 + LinuxAbi.TPACKET2_HDRLEN + 32
            + (vnetHeader ? LinuxAbi.VIRTIO_NET_HDR_SIZE : 0);
        return Math.max(2048, Integer.highestOneBit(needed - 1) << 1);
    }

    private static ReceiveRing openReceiveRing(Resources resources, int index, AfPacketOptions options, int mtu) {
        final int fd = resources.rxFd;
        final boolean frameRing = options.rxFrameSize() != 0;
        setInt(resources, fd, LinuxAbi.PACKET_VERSION, frameRing ? LinuxAbi.TPACKET_V2 : LinuxAbi.TPACKET_V3,
            frameRing ? "setsockopt(PACKET_VERSION, TPACKET_V2)" : "setsockopt(PACKET_VERSION, TPACKET_V3)");
        if (options.vnetHeader()) {
            setInt(resources, fd, LinuxAbi.PACKET_VNET_HDR, 1, "setsockopt(PACKET_VNET_HDR)");
        }
        // Our own transmissions (and the kernel's, on Tern's interface) are not input for the stack.
        setInt(resources, fd, LinuxAbi.PACKET_IGNORE_OUTGOING, 1, "setsockopt(PACKET_IGNORE_OUTGOING)");

        final int blockSize = options.rxBlockSize();
        final int blockCount = options.rxBlockCount();
        if (frameRing) {
            // tpacket_req: the first four fields of tpacket_req3, without the block timer and the rest.
            final boolean auto = options.rxFrameSize() == AfPacketOptions.RX_FRAME_SIZE_AUTO;
            final int frameSize = auto ? frameSlotFor(options.vnetHeader())
                : options.rxFrameSize() == AfPacketOptions.RX_FRAME_SIZE_MTU
                ? Math.min(frameSlotForMtu(mtu, options.vnetHeader()), blockSize) : options.rxFrameSize();
            // Auto: four slots to a block (blocks are whole pages); the block count stays as configured.
            final int frameBlockSize = auto ? (4 * frameSize + 4095) & -4096 : blockSize;
            if (frameSize > frameBlockSize) {
                throw new IllegalArgumentException("receive frame slots of " + frameSize + " bytes do not fit blocks of "
                    + frameBlockSize + "; use larger rxBlocks or the block ring");
            }
            final MemorySegment req = resources.arena.allocate(LinuxAbi.TPACKET_REQ_SIZE, 4);
            final int framesPerBlock = frameBlockSize / frameSize;
            req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_BLOCK_SIZE_OFFSET, frameBlockSize);
            req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_BLOCK_NR_OFFSET, blockCount);
            req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_FRAME_SIZE_OFFSET, frameSize);
            req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_FRAME_NR_OFFSET, framesPerBlock * blockCount);
            LibcException.check("setsockopt(PACKET_RX_RING)", Libc.setsockopt(resources.callState, fd, LinuxAbi.SOL_PACKET,
                LinuxAbi.PACKET_RX_RING, req, LinuxAbi.TPACKET_REQ_SIZE), resources.callState);
            final MemorySegment ring = resources.map(fd, (long) frameBlockSize * blockCount, true, "mmap(receive ring)");
            bindReceiver(resources, fd, index, options);
            return new FrameRxRing(ring, frameSize, frameBlockSize, framesPerBlock, blockCount, options.vnetHeader());
        }
        final MemorySegment req = resources.arena.allocate(LinuxAbi.TPACKET_REQ3_SIZE, 4);
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_BLOCK_SIZE_OFFSET, blockSize);
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_BLOCK_NR_OFFSET, blockCount);
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_FRAME_SIZE_OFFSET, RX_FRAME_SIZE);
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_FRAME_NR_OFFSET, blockSize / RX_FRAME_SIZE * blockCount);
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_RETIRE_BLK_TOV_OFFSET, options.rxBlockTimeoutMs());
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_SIZEOF_PRIV_OFFSET, 0);
        req.set(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_REQ3_FEATURE_REQ_WORD_OFFSET, 0);
        LibcException.check("setsockopt(PACKET_RX_RING)", Libc.setsockopt(resources.callState, fd, LinuxAbi.SOL_PACKET,
            LinuxAbi.PACKET_RX_RING, req, LinuxAbi.TPACKET_REQ3_SIZE), resources.callState);
        final MemorySegment ring = resources.map(fd, (long) blockSize * blockCount, true, "mmap(receive ring)");
        bindReceiver(resources, fd, index, options);
        return new RxRing(ring, blockSize, blockCount, options.vnetHeader());
    }

    private static void bindReceiver(Resources resources, int fd, int index, AfPacketOptions options) {
        bind(resources, fd, LinuxAbi.ETH_P_ALL, index);
        if (options.fanoutGroup() != AfPacketOptions.NO_FANOUT && options.fanoutShards() > 0) {
            joinSteeredFanout(resources, fd, options.fanoutGroup(), options.fanoutShards());
        } else if (options.fanoutGroup() != AfPacketOptions.NO_FANOUT) {
            // Must follow bind: the kernel joins only a running socket to a fanout group.
            setInt(resources, fd, LinuxAbi.PACKET_FANOUT, options.fanoutGroup() | LinuxAbi.PACKET_FANOUT_HASH << 16,
                "setsockopt(PACKET_FANOUT, group " + options.fanoutGroup() + ")");
        }
    }

    /**
     * Joins a PACKET_FANOUT_CBPF group and gives it Tern's steering program ({@link ShardSteering#fanoutProgram}).
     * The group's own hook replaces the socket's, so the socket's IGNORE_OUTGOING no longer applies: the group is
     * asked to ignore outgoing packets itself where the kernel knows the flag (else our own transmissions reach the
     * shards and are dropped there as our own frames). Every member sets the program; the last one set stays, and
     * they are the same.
     */
    private static void joinSteeredFanout(Resources resources, int fd, int group, int shards) {
        final int type = group | LinuxAbi.PACKET_FANOUT_CBPF << 16;
        if (trySetInt(resources, fd, LinuxAbi.PACKET_FANOUT, type | LinuxAbi.PACKET_FANOUT_FLAG_IGNORE_OUTGOING << 16) != 0) {
            setInt(resources, fd, LinuxAbi.PACKET_FANOUT, type, "setsockopt(PACKET_FANOUT, group " + group + ", CBPF)");
        }
        final List<ShardSteering.Instruction> program = ShardSteering.fanoutProgram(shards);
        final MemorySegment fprog = SocketFilters.fprog(resources.arena, program);
        LibcException.check("setsockopt(PACKET_FANOUT_DATA, " + program.size() + " cBPF instructions)",
            Libc.setsockopt(resources.callState, fd, LinuxAbi.SOL_PACKET, LinuxAbi.PACKET_FANOUT_DATA, fprog,
                LinuxAbi.SOCK_FPROG_SIZE), resources.callState);
    }

    private static TxRing openTransmitRing(Resources resources, int index, AfPacketOptions options, int mtu) {
        resources.txFd = LibcException.check("socket(AF_PACKET, SOCK_RAW)",
            Libc.socket(resources.callState, LinuxAbi.AF_PACKET, LinuxAbi.SOCK_RAW | LinuxAbi.SOCK_CLOEXEC, 0), resources.callState);
        final int fd = resources.txFd;
        final boolean offloads = options.vnetHeader();
        setInt(resources, fd, LinuxAbi.PACKET_VERSION, LinuxAbi.TPACKET_V2, "setsockopt(PACKET_VERSION, TPACKET_V2)");
        // The transmit socket has the vnet header even without offloads: it lets each frame be copied whole into
        // the skb instead of lent as zero-copy pages (see TxRing). A kernel that refuses it is fine without offloads.
        final boolean vnet;
        if (offloads) {
            setInt(resources, fd, LinuxAbi.PACKET_VNET_HDR, 1, "setsockopt(PACKET_VNET_HDR)");
            vnet = true;
        } else {
            vnet = trySetInt(resources, fd, LinuxAbi.PACKET_VNET_HDR, 1) == 0;
            // Deviation: no qdisc bypass with offloads. The bypass path (__dev_direct_xmit) drops every skb that
            // validation replaces, which is what software GSO does when the device cannot segment (TSO off, or a
            // NIC without it): a TSO request would never leave. The qdisc path segments; on veth it is noqueue.
            setInt(resources, fd, LinuxAbi.PACKET_QDISC_BYPASS, 1, "setsockopt(PACKET_QDISC_BYPASS)");
        }
        setInt(resources, fd, LinuxAbi.PACKET_LOSS, 1, "setsockopt(PACKET_LOSS)");

        final int frameSize;
        final int blockSize;
        if (offloads) {
            frameSize = align(LinuxAbi.TPACKET2_DATA_OFFSET + LinuxAbi.VIRTIO_NET_HDR_SIZE + MAX_SEGMENTATION_FRAME, LinuxAbi.TPACKET_ALIGNMENT);
            blockSize = TX_VNET_BLOCK_SIZE;
        } else {
            final int slot = LinuxAbi.TPACKET2_DATA_OFFSET + (vnet ? LinuxAbi.VIRTIO_NET_HDR_SIZE : 0) + mtu + LinuxAbi.ETH_HLEN + 4;
            frameSize = Math.max(RX_FRAME_SIZE, Integer.highestOneBit(slot - 1) << 1);
            blockSize = Math.max(TX_BLOCK_SIZE, frameSize);
        }
        final int framesPerBlock = blockSize / frameSize;
        final int wanted = options.txFrameCount() != AfPacketOptions.DEFAULT_TX_FRAMES ? options.txFrameCount()
            : offloads ? DEFAULT_TX_FRAMES_VNET : DEFAULT_TX_FRAMES;
        final int blockCount = (wanted + framesPerBlock - 1) / framesPerBlock;
        final int frameCount = blockCount * framesPerBlock;
        final MemorySegment req = resources.arena.allocate(LinuxAbi.TPACKET_REQ_SIZE, 4);
        req.set(ValueLayout.JAVA_INT, 0, blockSize);
        req.set(ValueLayout.JAVA_INT, 4, blockCount);
        req.set(ValueLayout.JAVA_INT, 8, frameSize);
        req.set(ValueLayout.JAVA_INT, 12, frameCount);
        LibcException.check("setsockopt(PACKET_TX_RING)", Libc.setsockopt(resources.callState, fd, LinuxAbi.SOL_PACKET,
            LinuxAbi.PACKET_TX_RING, req, LinuxAbi.TPACKET_REQ_SIZE), resources.callState);
        final MemorySegment ring = resources.map(fd, (long) blockSize * blockCount, false, "mmap(transmit ring)");
        bind(resources, fd, 0, index);
        return new TxRing(ring, blockSize, frameSize, frameCount, vnet, offloads, mtu);
    }

    private static int align(int value, int alignment) {
        return (value + alignment - 1) & -alignment;
    }

    private static void setInt(Resources resources, int fd, int option, int value, String call) {
        LibcException.check(call, trySetInt(resources, fd, option, value), resources.callState);
    }

    /** setsockopt(SOL_PACKET) of an int; returns its result (-1 with errno in the call state on failure). */
    private static int trySetInt(Resources resources, int fd, int option, int value) {
        final MemorySegment argument = resources.arena.allocateFrom(ValueLayout.JAVA_INT, value);
        return Libc.setsockopt(resources.callState, fd, LinuxAbi.SOL_PACKET, option, argument, 4);
    }

    private static void bind(Resources resources, int fd, int protocol, int index) {
        final MemorySegment address = resources.arena.allocate(LinuxAbi.SOCKADDR_LL_SIZE, 4);
        address.set(ValueLayout.JAVA_SHORT, LinuxAbi.SOCKADDR_LL_FAMILY_OFFSET, (short) LinuxAbi.AF_PACKET);
        BigEndian.u16(address, LinuxAbi.SOCKADDR_LL_PROTOCOL_OFFSET, protocol);
        address.set(ValueLayout.JAVA_INT, LinuxAbi.SOCKADDR_LL_IFINDEX_OFFSET, index);
        LibcException.check("bind(AF_PACKET, ifindex " + index + ")",
            Libc.bind(resources.callState, fd, address, LinuxAbi.SOCKADDR_LL_SIZE), resources.callState);
    }

    // ---- Link ----

    @Override
    public String name() {
        return "afpacket:" + interfaceName;
    }

    @Override
    public long macAddress() {
        return mac;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public int offloads() {
        return vnetHeader ? Offloads.TX_L4_CHECKSUM | Offloads.TX_TCP_SEGMENTATION | Offloads.RX_CHECKSUM : 0;
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        return rx.receive(handler, maxFrames);
    }

    /** Half the receive ring or more is waiting (see {@link ReceiveRing#backlogged()}). */
    @Override
    public boolean receivePressure() {
        return rx.backlogged();
    }

    @Override
    public boolean claim(TxFrame frame) {
        return tx.claim(frame);
    }

    @Override
    public void commit(TxFrame frame) {
        tx.commit(frame);
    }

    @Override
    public void abort(TxFrame frame) {
        tx.abort(frame);
    }

    @Override
    public int flush() {
        return tx.flush(callState, resources.txFd);
    }

    /**
     * Blocks up to {@code timeoutMs} (0: just check, -1: forever) until {@link #receive} has a frame to hand up.
     * For an idle shard or a test; a busy shard simply polls {@link #receive}. Allocates nothing.
     */
    @Override
    public boolean canAwaitFrames() {
        return true;
    }

    @Override
    public boolean awaitFrames(int timeoutMs) {
        if (rx.ready()) {
            return true;
        }
        if (wake.awaitBeside(callState, pollFd, resources.rxFd, LinuxAbi.POLLIN | LinuxAbi.POLLERR, timeoutMs)) {
            woken++;
        }
        return rx.ready();
    }

    /**
     * Bumps the event counter that {@link #awaitFrames} polls beside the socket (one {@code write(2)}). Closing waits
     * for a wake in progress, so no write reaches a closed (or reused) descriptor.
     */
    @Override
    public boolean wakeAwaitingThread() {
        return wake.wake();
    }

    /**
     * Joins the multicast group MAC on the interface ({@code PACKET_ADD_MEMBERSHIP}, {@code PACKET_MR_MULTICAST});
     * the kernel counts memberships per socket and drops them when the link closes.
     *
     * @throws LibcException if the kernel refuses
     */
    @Override
    public void addMulticast(long groupMac) {
        requireMulticast(groupMac);
        membership(LinuxAbi.PACKET_ADD_MEMBERSHIP, LinuxAbi.PACKET_MR_MULTICAST, groupMac, "PACKET_MR_MULTICAST");
    }

    /**
     * Attaches (or detaches) {@link SynShedFilter} to the receive socket: while on, the kernel drops IPv4 TCP SYNs
     * without ACK before they reach the ring. One setsockopt per change; the frames already in the ring stay.
     */
    @Override
    public boolean shedUnsolicitedSyns(boolean shed) {
        if (shed == sheddingSyns) {
            return true;
        }
        if (!attachShedFilter(shedSources, shedSourceCount, shed)) {
            return false;
        }
        sheddingSyns = shed;
        return true;
    }

    /**
     * Attaches {@link SynShedFilter#program} with {@code sources} as constants (classic BPF has no maps), or takes
     * the filter off when nothing is left to drop. At most {@link SynShedFilter#MAX_SOURCES}; one setsockopt per
     * change.
     */
    @Override
    public boolean shedSynsFrom(int[] sources, int count) {
        if (count > SynShedFilter.MAX_SOURCES) {
            return false;
        }
        if (count == shedSourceCount && java.util.Arrays.equals(sources, 0, count, shedSources, 0, count)) {
            return true;
        }
        if (!attachShedFilter(sources, count, sheddingSyns)) {
            return false;
        }
        System.arraycopy(sources, 0, shedSources, 0, count);
        shedSourceCount = count;
        return true;
    }

    /** SO_ATTACH_FILTER replaces the socket's filter whole; with nothing to drop, SO_DETACH_FILTER. Cold path. */
    private boolean attachShedFilter(int[] sources, int count, boolean atRandom) {
        final boolean attached = sheddingSyns || shedSourceCount > 0;
        if (count == 0 && !atRandom) {
            return !attached || Libc.setsockopt(callState, resources.rxFd, LinuxAbi.SOL_SOCKET,
                LinuxAbi.SO_DETACH_FILTER, detachArgument, 4) != -1;
        }
        if (count == 0) {
            return Libc.setsockopt(callState, resources.rxFd, LinuxAbi.SOL_SOCKET, LinuxAbi.SO_ATTACH_FILTER,
                synShedProgram, LinuxAbi.SOCK_FPROG_SIZE) != -1;
        }
        // The kernel copies the program in; its memory is needed only for the call.
        try (Arena call = Arena.ofConfined()) {
            return Libc.setsockopt(callState, resources.rxFd, LinuxAbi.SOL_SOCKET, LinuxAbi.SO_ATTACH_FILTER,
                SocketFilters.fprog(call, SynShedFilter.program(sources, count, atRandom)),
                LinuxAbi.SOCK_FPROG_SIZE) != -1;
        }
    }

    @Override
    public void removeMulticast(long groupMac) {
        requireMulticast(groupMac);
        membership(LinuxAbi.PACKET_DROP_MEMBERSHIP, LinuxAbi.PACKET_MR_MULTICAST, groupMac, "PACKET_MR_MULTICAST");
    }

    private static void requireMulticast(long groupMac) {
        if (!MacAddress.isMulticast(groupMac) || MacAddress.isBroadcast(groupMac)) {
            throw new IllegalArgumentException(MacAddress.format(groupMac) + " is not a multicast MAC address");
        }
    }

    private void membership(int option, int type, long address, String typeName) {
        membership.fill((byte) 0);
        membership.set(ValueLayout.JAVA_INT, LinuxAbi.PACKET_MREQ_IFINDEX_OFFSET, interfaceIndex);
        membership.set(ValueLayout.JAVA_SHORT, LinuxAbi.PACKET_MREQ_TYPE_OFFSET, (short) type);
        if (type != LinuxAbi.PACKET_MR_PROMISC) {
            membership.set(ValueLayout.JAVA_SHORT, LinuxAbi.PACKET_MREQ_ALEN_OFFSET, (short) 6);
            BigEndian.u48(membership, LinuxAbi.PACKET_MREQ_ADDRESS_OFFSET, address);
        }
        final String call = "setsockopt(" + (option == LinuxAbi.PACKET_ADD_MEMBERSHIP ? "PACKET_ADD_MEMBERSHIP" : "PACKET_DROP_MEMBERSHIP")
            + ", " + typeName + (type == LinuxAbi.PACKET_MR_PROMISC ? "" : " " + MacAddress.format(address)) + ")";
        LibcException.check(call, Libc.setsockopt(callState, resources.rxFd, LinuxAbi.SOL_PACKET, option, membership,
            LinuxAbi.PACKET_MREQ_SIZE), callState);
    }

    /** A snapshot of the link's counters; reads (and accumulates) the kernel's clear-on-read PACKET_STATISTICS. */
    private static final String[] STATISTIC_NAMES = {"rx.frames", "rx.bytes", "rx.truncated", "rx.kernel_drops",
        "rx.kernel_freezes", "tx.frames", "tx.bytes", "tx.ring_full", "tx.busy", "tx.errors", "tx.rejected",
        "tx.dropped", "tx.send_calls", "rx.woken"};

    @Override
    public String[] statisticNames() {
        return STATISTIC_NAMES.clone();
    }


    /** The counters of {@link #stats()}, read the same way (the kernel's with one getsockopt) without a snapshot object. */
    @Override
    public void statistics(long[] values) {
        if (!closed) {
            readKernelStatistics();
        }
        values[0] = rx.frames();
        values[1] = rx.bytes();
        values[2] = rx.truncated();
        values[3] = kernelDrops;
        values[4] = kernelFreezes;
        values[5] = tx.frames;
        values[6] = tx.bytes;
        values[7] = tx.ringFull;
        values[8] = tx.busy;
        values[9] = tx.errors;
        values[10] = tx.rejected;
        values[11] = tx.dropped;
        values[12] = tx.sendCalls;
        values[13] = woken;
    }

    private void readKernelStatistics() {
        kernelStatsLength.set(ValueLayout.JAVA_INT, 0, LinuxAbi.TPACKET_STATS_V3_SIZE);
        LibcException.check("getsockopt(PACKET_STATISTICS)", Libc.getsockopt(callState, resources.rxFd, LinuxAbi.SOL_PACKET,
            LinuxAbi.PACKET_STATISTICS, kernelStats, kernelStatsLength), callState);
        kernelPackets += Integer.toUnsignedLong(kernelStats.get(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_STATS_V3_PACKETS_OFFSET));
        kernelDrops += Integer.toUnsignedLong(kernelStats.get(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_STATS_V3_DROPS_OFFSET));
        kernelFreezes += Integer.toUnsignedLong(kernelStats.get(ValueLayout.JAVA_INT, LinuxAbi.TPACKET_STATS_V3_FREEZE_Q_CNT_OFFSET));
    }

    public AfPacketStats stats() {
        if (!closed) {
            readKernelStatistics();
        }
        return new AfPacketStats(rx.frames(), rx.bytes(), rx.truncated(), tx.frames, tx.bytes, tx.ringFull, tx.busy, tx.errors,
            tx.rejected, tx.dropped, tx.sendCalls, tx.pending(), kernelPackets, kernelDrops, kernelFreezes);
    }

    /** errno of the last flush that failed with something other than EAGAIN/ENOBUFS, or 0. */
    public int lastTransmitErrno() {
        return tx.lastErrno;
    }

    public String interfaceName() {
        return interfaceName;
    }

    public int interfaceIndex() {
        return interfaceIndex;
    }

    /** The interface's own MAC, which differs from {@link #macAddress()} when the options gave the stack its own. */
    public long interfaceMac() {
        return interfaceMac;
    }

    /** Bytes a claimed TX buffer holds: MTU + 18 without the vnet header, a 64 KiB TSO super-frame with it. */
    public int transmitCapacity() {
        return tx.capacity();
    }

    public int transmitSlots() {
        return tx.frameCount();
    }

    /** Frames whose 802.1Q tag the kernel had moved out of band and the ring put back in place. */
    long vlanTagsRestored() {
        return rx.vlanTagsRestored();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            wake.shut();
            resources.release();
        }
    }

    @Override
    public String toString() {
        return name() + " " + MacAddress.format(mac) + " mtu " + mtu + " offloads " + Offloads.describe(offloads());
    }

    /** Everything an open link holds from the kernel, released together (also when open fails half way). */
    private static final class Resources {
        final Arena arena = Arena.ofShared();
        final MemorySegment callState = Libc.newCallState(arena);
        int rxFd = -1;
        int txFd = -1;
        int eventFd = -1;
        long rxAddress;
        long rxLength;
        long txAddress;
        long txLength;

        MemorySegment map(int fd, long length, boolean receive, String call) {
            final long address = Libc.mmap(callState, length, LinuxAbi.PROT_READ | LinuxAbi.PROT_WRITE, LinuxAbi.MAP_SHARED, fd, 0);
            if (address == -1) {
                throw new LibcException(call, Libc.errno(callState));
            }
            if (receive) {
                rxAddress = address;
                rxLength = length;
            } else {
                txAddress = address;
                txLength = length;
            }
            // Tied to the arena: after close, an access fails instead of touching unmapped memory.
            return MemorySegment.ofAddress(address).reinterpret(length, arena, null);
        }

        void release() {
            try (Arena scratch = Arena.ofConfined()) {
                final MemorySegment state = Libc.newCallState(scratch);
                arena.close();
                if (rxAddress != 0) {
                    Libc.munmap(state, rxAddress, rxLength);
                    rxAddress = 0;
                }
                if (txAddress != 0) {
                    Libc.munmap(state, txAddress, txLength);
                    txAddress = 0;
                }
                if (rxFd >= 0) {
                    Libc.close(state, rxFd);
                    rxFd = -1;
                }
                if (txFd >= 0) {
                    Libc.close(state, txFd);
                    txFd = -1;
                }
                if (eventFd >= 0) {
                    Libc.close(state, eventFd);
                    eventFd = -1;
                }
            }
        }
    }
}
