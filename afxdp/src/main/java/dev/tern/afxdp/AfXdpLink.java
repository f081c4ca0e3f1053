package dev.tern.afxdp;

import dev.tern.afxdp.sys.Sys;
import dev.tern.afxdp.sys.SysException;
import dev.tern.afxdp.sys.XdpAbi;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.sys.EventCounterWake;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.sys.Libc;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Link} on one queue of a Linux interface through an AF_XDP socket, with an XDP program that redirects to it
 * only Tern's frames ({@link XdpSteering}); everything else goes on to the kernel, which keeps the interface.
 *
 * <pre>
 *   UMEM (off-heap, page-aligned, frameCount x chunkSize), registered with XDP_UMEM_REG
 *   +---------------- receive chunks [0, n/2) ----------------+------------- transmit chunks [n/2, n) ------------+
 *     fill ring  --(Tern gives empty chunks)-->  kernel           free stack --claim--> stack writes frame in place
 *     RX ring    <--(kernel: addr, len)--        kernel           TX ring --flush (sendto kick)--> kernel
 *     handler gets (umem, addr, len) in place, chunk back          completion ring --> free stack
 *     to the fill ring after the batch
 * </pre>
 * Each ring is as large as the chunks that can be in it, so the fill and TX rings never lack room and nothing the
 * kernel handed over is ever lost for want of a slot. Frames reach the stack where the kernel (or the NIC, in
 * zero-copy mode) wrote them; transmit frames are written by the stack where the kernel reads them.
 *
 * <p>Bind: zero-copy when the driver offers it ({@code XDP_ZEROCOPY}), else copy mode ({@code XDP_COPY}; veth is
 * always copy mode), with {@code XDP_USE_NEED_WAKEUP}: the link makes a {@code sendto} to transmit, and a
 * {@code recvfrom} after refilling, only when the kernel sets the ring's need-wakeup flag.
 *
 * <p>No offloads: the stack computes checksums and segments itself. A descriptor claiming more than its chunk is
 * counted ({@code afxdp.rx.too_long}) and dropped.
 *
 * <p>Frames longer than a chunk (an MTU above 1,774 with 2,048-byte chunks, 3,822 with 4,096-byte ones) use AF_XDP's
 * multi-buffer frames (Linux 6.6+, the kernel's Documentation/networking/af_xdp.rst, "Multi-Buffer Support"): the program is loaded with
 * {@code BPF_F_XDP_HAS_FRAGS}, the socket bound with {@code XDP_USE_SG}, and a frame spans several descriptors, each
 * but the last flagged {@code XDP_PKT_CONTD}. Received, its pieces are copied into one gather buffer of MTU + 18 bytes
 * and handed on from there (a frame that does not fit is counted as {@code afxdp.rx.too_long} and dropped whole).
 * Sent, the stack writes it in place into a transmit slot of several adjacent chunks, and each chunk goes out as one
 * descriptor of the chain. Frames that fit one chunk take the single-descriptor path as before, in place both ways.
 *
 * <p>Owned by one shard thread; not thread-safe. It may be opened on another thread (a test opens it inside a
 * namespace) and handed over. A received frame is valid until the handler returns.
 */
public final class AfXdpLink implements Link {
    private static final String[] STATISTIC_NAMES = {"afxdp.zerocopy", "afxdp.xdp_native", "afxdp.rx.frames",
        "afxdp.rx.bytes", "afxdp.rx.too_long", "afxdp.rx.dropped", "afxdp.rx.invalid_descs", "afxdp.rx.ring_full",
        "afxdp.rx.fill_ring_empty", "afxdp.rx.fill_short", "afxdp.rx.wakeups", "afxdp.tx.frames", "afxdp.tx.bytes",
        "afxdp.tx.ring_full", "afxdp.tx.rejected", "afxdp.tx.invalid_descs", "afxdp.tx.ring_empty",
        "afxdp.tx.send_calls", "afxdp.tx.errors", "afxdp.busy_poll", "afxdp.rx.syn_shed", "afxdp.rx.busy_polls",
        "afxdp.rx.woken"};
    private static final int EAGAIN = 11;
    private static final int EBUSY = 16;
    private static final int ENOBUFS = 105;
    private static final int ENETDOWN = 100;

    private final String interfaceName;
    private final int interfaceIndex;
    private final int queue;
    private final long mac;
    private final int mtu;
    private final int chunkSize;
    private final boolean zeroCopy;
    private boolean busyPoll;
    private final Resources resources;
    private final MemorySegment umem;
    private final XskRing fill;
    private final XskRing completion;
    private final XskRing rx;
    private final XskRing tx;
    private final MemorySegment callState;
    private final MemorySegment pollFd;
    private final MemorySegment statistics;
    private final MemorySegment statisticsLength;
    private final long[] freeTx;
    private int freeTxCount;
    /** Bytes of one transmit slot: one chunk, or the adjacent chunks a multi-buffer frame of MTU + 18 bytes needs. */
    private final int txSlotSize;
    private final long txBase;
    /** A multi-buffer frame's pieces so far (empty when the link takes no multi-buffer frames). */
    private final MemorySegment gather;
    private int gatherLength;
    /** The frame being gathered is dropped: a piece was invalid or did not fit; the rest of its chain is skipped. */
    private boolean gatherDropping;
    private int txPending;
    private boolean closed;
    private boolean sheddingSyns;
    /** Waits that another thread's wake ended ({@link #wakeAwaitingThread}). Owner thread. */
    private long woken;
    /** The event counter polled beside the socket, for another thread to wake the owner. */
    private final EventCounterWake wake;

    private long rxFrames;
    private long rxBytes;
    private long rxTooLong;
    private long rxFillShort;
    /** The chunk of the frame being handed up in place (lendable), else -1; whether the stack took it. */
    private long lendable = -1;
    private boolean lentNow;
    /** Receive chunks lent to the stack now, and how many may be: a quarter of them. */
    private int lent;
    private final int lendLimit;
    private long rxWakeups;
    private long txFrames;
    private long txBytes;
    private long txRingFull;
    private long txRejected;
    private long txSendCalls;
    private long txErrors;
    private int lastTransmitErrno;
    private long rxSynShed;
    private long rxBusyPolls;

    private AfXdpLink(String interfaceName, int interfaceIndex, int queue, long mac, int mtu, int chunkSize, boolean zeroCopy,
                      Resources resources, MemorySegment umem, XskRing fill, XskRing completion, XskRing rx, XskRing tx,
                      long[] freeTx, int txSlotSize, MemorySegment gather) {
        this.interfaceName = interfaceName;
        this.interfaceIndex = interfaceIndex;
        this.queue = queue;
        this.mac = mac;
        this.mtu = mtu;
        this.chunkSize = chunkSize;
        this.zeroCopy = zeroCopy;
        this.resources = resources;
        this.umem = umem;
        this.fill = fill;
        this.completion = completion;
        this.rx = rx;
        this.tx = tx;
        this.freeTx = freeTx;
        this.freeTxCount = freeTx.length;
        this.txSlotSize = txSlotSize;
        this.txBase = freeTx.length == 0 ? 0 : freeTx[0];
        this.gather = gather;
        this.lendLimit = FrameHolds.lendLimit(fill.size()); // the fill ring has an entry per receive chunk
        this.callState = resources.callState;
        this.pollFd = EventCounterWake.pollFds(resources.arena); // the socket, then the event counter
        this.wake = new EventCounterWake(resources.eventFd, resources.arena);
        this.statistics = resources.arena.allocate(XdpAbi.STATISTICS_SIZE, 8);
        this.statisticsLength = resources.arena.allocate(ValueLayout.JAVA_INT);
    }

    /**
     * Opens the link on {@code interfaceName} (in the calling thread's network namespace), loads and attaches the
     * steering program.
     *
     * @throws AfXdpOpenException with a one-line reason
     */
    public static AfXdpLink open(String interfaceName, AfXdpOptions options) {
        Objects.requireNonNull(interfaceName, "interfaceName");
        Objects.requireNonNull(options, "options");
        if (interfaceName.isEmpty() || interfaceName.length() >= XdpAbi.IFNAMSIZ || interfaceName.indexOf('/') >= 0) {
            throw new AfXdpOpenException("afxdp: '" + interfaceName + "' is not an interface name");
        }
        final Resources resources = new Resources();
        try {
            return openWith(interfaceName, options, resources);
        } catch (SysException e) {
            resources.release();
            throw AfXdpOpenException.failed(interfaceName, e);
        } catch (RuntimeException | Error e) {
            resources.release();
            throw e;
        }
    }

    private static AfXdpLink openWith(String name, AfXdpOptions options, Resources resources) {
        final Arena arena = resources.arena;
        final MemorySegment cs = resources.callState;
        final int index = Libc.ifNameToIndex(cs, arena.allocateFrom(name));
        if (index == 0) {
            throw AfXdpOpenException.noSuchInterface(name);
        }
        final long[] macAndMtu = interfaceFacts(arena, cs, name);
        final long mac = options.mac() == AfXdpOptions.INTERFACE_MAC ? macAndMtu[0] : options.mac();
        final int mtu = (int) macAndMtu[1];
        final int chunkSize = options.chunkSize();
        final int frameLimit = mtu + MAX_HEADER;
        final boolean multiBuffer = frameLimit > chunkSize - XdpAbi.XDP_PACKET_HEADROOM;
        final int slotChunks = (frameLimit + chunkSize - 1) / chunkSize;
        if (slotChunks > MAX_PIECES) {
            throw new AfXdpOpenException("afxdp:" + name + ": MTU " + mtu + " is too large: a frame may span at most "
                + MAX_PIECES + " UMEM chunks of " + chunkSize + " bytes, so the largest MTU is "
                + (MAX_PIECES * chunkSize - MAX_HEADER) + "; use a smaller MTU, or --link afpacket:" + name);
        }

        resources.fd = Sys.check("socket(AF_XDP)", Libc.socket(cs, XdpAbi.AF_XDP, XdpAbi.SOCK_RAW | XdpAbi.SOCK_CLOEXEC, 0), cs);
        // An event counter beside the socket in awaitFrames' poll, for another thread to wake the owner.
        resources.eventFd = Sys.check("eventfd", Libc.eventfd(cs, 0, XdpAbi.EFD_NONBLOCK | XdpAbi.EFD_CLOEXEC), cs);
        final int fd = resources.fd;
        final int frames = options.frameCount();
        final int half = frames / 2;
        final MemorySegment umem = arena.allocate((long) frames * chunkSize, Math.max(4096, Libc.pageSize()));
        final MemorySegment reg = arena.allocate(XdpAbi.UMEM_REG_SIZE, 8);
        reg.set(ValueLayout.JAVA_LONG, XdpAbi.UMEM_REG_ADDR, umem.address());
        reg.set(ValueLayout.JAVA_LONG, XdpAbi.UMEM_REG_LEN, umem.byteSize());
        reg.set(ValueLayout.JAVA_INT, XdpAbi.UMEM_REG_CHUNK_SIZE, chunkSize);
        reg.set(ValueLayout.JAVA_INT, XdpAbi.UMEM_REG_HEADROOM, 0);
        Sys.check("setsockopt(XDP_UMEM_REG)", Libc.setsockopt(cs, fd, XdpAbi.SOL_XDP, XdpAbi.XDP_UMEM_REG, reg,
            XdpAbi.UMEM_REG_SIZE), cs);
        setRingSize(arena, cs, fd, XdpAbi.XDP_UMEM_FILL_RING, half, "XDP_UMEM_FILL_RING");
        setRingSize(arena, cs, fd, XdpAbi.XDP_UMEM_COMPLETION_RING, half, "XDP_UMEM_COMPLETION_RING");
        setRingSize(arena, cs, fd, XdpAbi.XDP_RX_RING, half, "XDP_RX_RING");
        setRingSize(arena, cs, fd, XdpAbi.XDP_TX_RING, half, "XDP_TX_RING");

        final MemorySegment offsets = arena.allocate(XdpAbi.MMAP_OFFSETS_SIZE, 8);
        final MemorySegment length = arena.allocateFrom(ValueLayout.JAVA_INT, XdpAbi.MMAP_OFFSETS_SIZE);
        Sys.check("getsockopt(XDP_MMAP_OFFSETS)", Libc.getsockopt(cs, fd, XdpAbi.SOL_XDP, XdpAbi.XDP_MMAP_OFFSETS, offsets, length), cs);
        final XskRing rx = resources.ring(fd, offsets, XdpAbi.MMAP_OFFSETS_RX, XdpAbi.XDP_PGOFF_RX_RING, XdpAbi.DESC_SIZE, half, "rx");
        final XskRing tx = resources.ring(fd, offsets, XdpAbi.MMAP_OFFSETS_TX, XdpAbi.XDP_PGOFF_TX_RING, XdpAbi.DESC_SIZE, half, "tx");
        final XskRing fill = resources.ring(fd, offsets, XdpAbi.MMAP_OFFSETS_FR, XdpAbi.XDP_UMEM_PGOFF_FILL_RING, XdpAbi.ADDR_SIZE, half, "fill");
        final XskRing completion = resources.ring(fd, offsets, XdpAbi.MMAP_OFFSETS_CR, XdpAbi.XDP_UMEM_PGOFF_COMPLETION_RING,
            XdpAbi.ADDR_SIZE, half, "completion");

        // Every receive chunk starts in the fill ring: the kernel may write into any of them from bind on.
        final int room = fill.free(half);
        for (int i = 0; i < room; i++) {
            fill.memory().set(ValueLayout.JAVA_LONG, fill.entryOffset(fill.producerIndex() + i), (long) i * chunkSize);
        }
        fill.submit(room);
        // A transmit slot is as many adjacent chunks as a frame of MTU + 18 bytes needs (one unless multi-buffer); the
        // TX ring has one entry per transmit chunk, so it has room for every descriptor of every slot at once.
        final long[] freeTx = new long[half / slotChunks];
        for (int i = 0; i < freeTx.length; i++) {
            freeTx[i] = (long) (half + i * slotChunks) * chunkSize;
        }

        final boolean zeroCopy;
        try {
            zeroCopy = bind(arena, cs, fd, index, options, multiBuffer);
        } catch (SysException e) {
            if (multiBuffer && (e.errno() == EINVAL || e.errno() == EOPNOTSUPP)) {
                throw multiBufferRefused(name, mtu, chunkSize, "bind with XDP_USE_SG", e.errno());
            }
            throw e;
        }
        try {
            resources.steering = XdpSteering.attach(arena, cs, name, index, options.queue(), fd, mac, options.ipv4(),
                options.genericXdp(), multiBuffer);
        } catch (AfXdpOpenException e) {
            if (multiBuffer && e.errno() == EINVAL) {
                throw multiBufferRefused(name, mtu, chunkSize, "a program with BPF_F_XDP_HAS_FRAGS", EINVAL);
            }
            throw e;
        }
        final MemorySegment gather = multiBuffer ? arena.allocate(frameLimit, 64) : MemorySegment.NULL;
        final AfXdpLink link = new AfXdpLink(name, index, options.queue(), mac, mtu, chunkSize, zeroCopy, resources, umem, fill,
            completion, rx, tx, freeTx, slotChunks * chunkSize, gather);
        link.busyPoll = options.busyPollUs() > 0 && preferBusyPoll(arena, cs, fd, options.busyPollUs());
        return link;
    }

    /** The Ethernet header with one VLAN tag: a frame is at most MTU + 18 bytes (without the FCS). */
    private static final int MAX_HEADER = 18;
    /**
     * The most descriptors one frame may span. The kernel's copy-mode transmit puts the first descriptor in a socket
     * buffer's linear part and each further one in a page fragment, at most MAX_SKB_FRAGS (17), and drops a longer
     * chain (EOVERFLOW, xsk_build_skb in net/xdp/xsk.c); 16 keeps clear of that limit whatever MAX_SKB_FRAGS a kernel
     * was built with.
     */
    static final int MAX_PIECES = 16;
    private static final int EINVAL = 22;
    private static final int EOPNOTSUPP = 95;

    private static AfXdpOpenException multiBufferRefused(String name, int mtu, int chunkSize, String what, int errno) {
        return new AfXdpOpenException("afxdp:" + name + ": MTU " + mtu + " needs multi-buffer AF_XDP frames (Linux 6.6+), but "
            + "the kernel refused " + what + " (" + Libc.errnoName(errno) + "); the largest MTU without them is "
            + (chunkSize - XdpAbi.XDP_PACKET_HEADROOM - MAX_HEADER) + " (" + chunkSize + "-byte chunks); or use --link afpacket:"
            + name);
    }

    /**
     * Asks the kernel to busy-poll the queue's NAPI context from this socket's syscalls (Linux 5.11+); returns whether
     * all three options held. A kernel without them leaves the link as it is: busy polling is a latency aid, not a need.
     */
    private static boolean preferBusyPoll(Arena arena, MemorySegment cs, int fd, int microseconds) {
        return Libc.setsockopt(cs, fd, XdpAbi.SOL_SOCKET, XdpAbi.SO_PREFER_BUSY_POLL, arena.allocateFrom(ValueLayout.JAVA_INT, 1), 4) == 0
            && Libc.setsockopt(cs, fd, XdpAbi.SOL_SOCKET, XdpAbi.SO_BUSY_POLL, arena.allocateFrom(ValueLayout.JAVA_INT, microseconds), 4) == 0
            && Libc.setsockopt(cs, fd, XdpAbi.SOL_SOCKET, XdpAbi.SO_BUSY_POLL_BUDGET, arena.allocateFrom(ValueLayout.JAVA_INT, 64), 4) == 0;
    }

    /** Whether busy polling was asked for and the kernel took it ({@link AfXdpOptions#busyPollUs}). */
    public boolean busyPoll() {
        return busyPoll;
    }

    /** The interface's MAC and MTU, and a check that it is up, through an AF_INET socket's ioctls. */
    private static long[] interfaceFacts(Arena arena, MemorySegment cs, String name) {
        final int fd = Sys.check("socket(AF_INET, SOCK_DGRAM)", Libc.socket(cs, XdpAbi.AF_INET, XdpAbi.SOCK_DGRAM | XdpAbi.SOCK_CLOEXEC, 0), cs);
        try {
            final MemorySegment request = arena.allocate(XdpAbi.IFREQ_SIZE, 8);
            ifreq(request, name, arena);
            Sys.check("ioctl(SIOCGIFFLAGS)", Libc.ioctl(cs, fd, XdpAbi.SIOCGIFFLAGS, request), cs);
            if ((request.get(ValueLayout.JAVA_SHORT, XdpAbi.IFREQ_UNION) & XdpAbi.IFF_UP) == 0) {
                throw AfXdpOpenException.interfaceDown(name);
            }
            ifreq(request, name, arena);
            Sys.check("ioctl(SIOCGIFHWADDR)", Libc.ioctl(cs, fd, XdpAbi.SIOCGIFHWADDR, request), cs);
            final long mac = BigEndian.u48(request, XdpAbi.IFREQ_HWADDR_DATA);
            ifreq(request, name, arena);
            Sys.check("ioctl(SIOCGIFMTU)", Libc.ioctl(cs, fd, XdpAbi.SIOCGIFMTU, request), cs);
            return new long[] {mac, request.get(ValueLayout.JAVA_INT, XdpAbi.IFREQ_UNION)};
        } finally {
            Libc.close(cs, fd);
        }
    }

    private static void ifreq(MemorySegment request, String name, Arena arena) {
        request.fill((byte) 0);
        MemorySegment.copy(arena.allocateFrom(name), 0, request, 0, name.length());
    }

    private static void setRingSize(Arena arena, MemorySegment cs, int fd, int option, int entries, String optionName) {
        Sys.check("setsockopt(" + optionName + ", " + entries + ")", Libc.setsockopt(cs, fd, XdpAbi.SOL_XDP, option,
            arena.allocateFrom(ValueLayout.JAVA_INT, entries), 4), cs);
    }

    /**
     * Binds zero-copy when asked or offered, else copy mode, with {@code XDP_USE_SG} when frames may span several
     * chunks; returns whether zero-copy held.
     */
    private static boolean bind(Arena arena, MemorySegment cs, int fd, int index, AfXdpOptions options, boolean multiBuffer) {
        final int sg = multiBuffer ? XdpAbi.XDP_USE_SG : 0;
        final MemorySegment address = arena.allocate(XdpAbi.SOCKADDR_XDP_SIZE, 8);
        address.set(ValueLayout.JAVA_SHORT, XdpAbi.SXDP_FAMILY, (short) XdpAbi.AF_XDP);
        address.set(ValueLayout.JAVA_INT, XdpAbi.SXDP_IFINDEX, index);
        address.set(ValueLayout.JAVA_INT, XdpAbi.SXDP_QUEUE_ID, options.queue());
        if (options.bindMode() != AfXdpOptions.BindMode.COPY) {
            address.set(ValueLayout.JAVA_SHORT, XdpAbi.SXDP_FLAGS, (short) (XdpAbi.XDP_ZEROCOPY | XdpAbi.XDP_USE_NEED_WAKEUP | sg));
            if (bindWhileReleased(cs, fd, address) == 0) {
                return true;
            }
            if (options.bindMode() == AfXdpOptions.BindMode.ZEROCOPY) {
                throw new SysException("bind(AF_XDP, XDP_ZEROCOPY, queue " + options.queue() + ")", Libc.errno(cs));
            }
        }
        address.set(ValueLayout.JAVA_SHORT, XdpAbi.SXDP_FLAGS, (short) (XdpAbi.XDP_COPY | XdpAbi.XDP_USE_NEED_WAKEUP | sg));
        Sys.check("bind(AF_XDP, XDP_COPY, queue " + options.queue() + ")", bindWhileReleased(cs, fd, address), cs);
        return false;
    }

    /** How long a bind waits for the queue of a socket closed a moment ago (see {@link #bindWhileReleased}). */
    private static final long RELEASE_WAIT_NANOS = 2_000_000_000L;

    /**
     * bind(2), again while it fails with EBUSY for up to {@link #RELEASE_WAIT_NANOS}: closing an AF_XDP socket frees
     * its queue only when the kernel's deferred work releases the socket's buffer pool (xp_put_pool, net/xdp), so a
     * link opened on the queue right after another closed (a benchmark's next round, a restarted program) would
     * otherwise find it taken. A queue that another live socket holds stays EBUSY, and the caller reports it.
     */
    private static int bindWhileReleased(MemorySegment cs, int fd, MemorySegment address) {
        final long deadline = System.nanoTime() + RELEASE_WAIT_NANOS;
        int result;
        while ((result = Libc.bind(cs, fd, address, XdpAbi.SOCKADDR_XDP_SIZE)) != 0 && Libc.errno(cs) == EBUSY
            && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(20_000_000L);
        }
        return result;
    }

    // ---- Link ----

    @Override
    public String name() {
        return "afxdp:" + interfaceName + ":" + queue;
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
        return 0;
    }

    /** Half the RX ring or more holds descriptors we have not taken yet. */
    @Override
    public boolean receivePressure() {
        return rx.halfFull();
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        int ready = rx.available(maxFrames);
        if (ready == 0) {
            if (!busyPoll) {
                return 0;
            }
            // With SO_PREFER_BUSY_POLL the kernel leaves the queue's NAPI context to this socket's system calls: a
            // non-blocking recvfrom runs one poll of it (sk_busy_loop in xsk_recvmsg, net/xdp/xsk.c), which moves
            // waiting frames into the RX ring on this thread instead of in a softirq elsewhere.
            rxBusyPolls++;
            Libc.recvfromWithoutErrno(resources.fd, XdpAbi.MSG_DONTWAIT);
            ready = rx.available(maxFrames);
            if (ready == 0) {
                return 0;
            }
        }
        // The fill ring holds every receive chunk, so it has room for each one handed back; should it ever not, the
        // rest stay in the RX ring for the next call rather than be lost.
        final int n = fill.free(ready);
        if (n < ready) {
            rxFillShort++;
        }
        final MemorySegment ring = rx.memory();
        final int first = rx.consumerIndex();
        final int fillAt = fill.producerIndex();
        final long chunkMask = ~((long) chunkSize - 1);
        int refill = 0;
        for (int i = 0; i < n; i++) {
            final long entry = rx.entryOffset(first + i);
            final long address = ring.get(ValueLayout.JAVA_LONG, entry + XdpAbi.DESC_ADDR);
            final int length = ring.get(ValueLayout.JAVA_INT, entry + XdpAbi.DESC_LEN);
            final boolean more = (ring.get(ValueLayout.JAVA_INT, entry + XdpAbi.DESC_OPTIONS) & XdpAbi.XDP_PKT_CONTD) != 0;
            final long chunk = address & chunkMask;
            final boolean valid = length >= 0 && chunk >= 0 && chunk < umem.byteSize() && address + length <= chunk + chunkSize;
            if (!more && gatherLength == 0 && !gatherDropping) {
                // A whole frame in one descriptor: handed on in place.
                if (valid) {
                    rxFrames++;
                    rxBytes += length;
                    lendable = chunk;
                    lentNow = false;
                    handler.onFrame(umem, address, length, 0);
                    lendable = -1;
                    if (lentNow) {
                        continue; // the stack keeps this frame (lendFrame): its chunk goes back to the fill ring on return
                    }
                } else {
                    rxTooLong++;
                }
            } else {
                gatherPiece(handler, address, length, valid, more);
            }
            fill.memory().set(ValueLayout.JAVA_LONG, fill.entryOffset(fillAt + refill), chunk);
            refill++;
        }
        rx.release(n);
        fill.submit(refill);
        wakeFillIfAsked();
        return n;
    }

    /** After chunks went into the fill ring: a {@code recvfrom} when the kernel set the ring's need-wakeup flag. */
    private void wakeFillIfAsked() {
        if (fill.needsWakeup()) {
            rxWakeups++;
            Libc.recvfromWithoutErrno(resources.fd, XdpAbi.MSG_DONTWAIT); // its errno is not read: no capture
        }
    }

    /**
     * Lends the frame being handed up in place: its chunk stays out of the fill ring until {@link #returnFrame}. At
     * most a quarter of the receive chunks at once, so the kernel always has three quarters to receive into; a frame
     * gathered from several descriptors is a copy and is not lent.
     */
    @Override
    public int lendFrame(MemorySegment segment, long offset) {
        final long at = segment.address() + offset - umem.address();
        if (lendable < 0 || lentNow || lent >= lendLimit || !segment.isNative()
            || (at & ~((long) chunkSize - 1)) != lendable) {
            return -1;
        }
        lentNow = true;
        lent++;
        return (int) (lendable / chunkSize);
    }

    @Override
    public void returnFrame(int lease) {
        // The fill ring has an entry for every receive chunk, and a lent chunk is in none of the rings, so there is
        // room for it.
        lent--;
        fill.memory().set(ValueLayout.JAVA_LONG, fill.entryOffset(fill.producerIndex()), (long) lease * chunkSize);
        fill.submit(1);
        wakeFillIfAsked();
    }

    /**
     * One descriptor of a multi-buffer frame, copied after the pieces before it (the chunk goes back to the fill ring
     * at once, so a chain split across two calls costs nothing more); the last piece, without
     * {@code XDP_PKT_CONTD}, hands the gathered frame on. A chain with an invalid piece, or longer than the gather
     * buffer (MTU + 18: nothing longer is a frame for this link; an interface whose MTU was raised under the open
     * link can deliver one), is counted once as {@code rx.too_long} and dropped whole. Without multi-buffer the kernel sets no {@code XDP_PKT_CONTD}
     * and this is never reached.
     */
    private void gatherPiece(FrameHandler handler, long address, int length, boolean valid, boolean more) {
        if (!gatherDropping) {
            if (valid && gatherLength + length <= gather.byteSize()) {
                MemorySegment.copy(umem, address, gather, gatherLength, length);
                gatherLength += length;
            } else {
                gatherDropping = true;
            }
        }
        if (!more) {
            if (gatherDropping) {
                rxTooLong++;
            } else {
                rxFrames++;
                rxBytes += gatherLength;
                handler.onFrame(gather, 0, gatherLength, 0);
            }
            gatherLength = 0;
            gatherDropping = false;
        }
    }

    @Override
    public boolean claim(TxFrame frame) {
        if (freeTxCount == 0) {
            reapCompletions();
            if (freeTxCount == 0) {
                txRingFull++;
                return false;
            }
        }
        final long address = freeTx[--freeTxCount];
        frame.claimed(umem, address, txSlotSize, address);
        return true;
    }

    @Override
    public void commit(TxFrame frame) {
        if (frame.segmentSize() != TxFrame.NO_SEGMENTATION || frame.checksumStart() >= 0 || frame.ipChecksum()) {
            // The link reports no offloads; a request for one is the caller's bug, not a frame to send wrong.
            txRejected++;
            abort(frame);
            return;
        }
        final MemorySegment ring = tx.memory();
        final int length = frame.length();
        // One descriptor per chunk of the slot the frame uses, each but the last flagged XDP_PKT_CONTD (a frame
        // within one chunk: one descriptor, no flag).
        int offset = 0;
        do {
            final int piece = Math.min(chunkSize, length - offset);
            final long entry = tx.entryOffset(tx.producerIndex() + txPending);
            ring.set(ValueLayout.JAVA_LONG, entry + XdpAbi.DESC_ADDR, frame.token() + offset);
            ring.set(ValueLayout.JAVA_INT, entry + XdpAbi.DESC_LEN, piece);
            offset += piece;
            ring.set(ValueLayout.JAVA_INT, entry + XdpAbi.DESC_OPTIONS, offset < length ? XdpAbi.XDP_PKT_CONTD : 0);
            txPending++;
        } while (offset < length);
        txFrames++;
        txBytes += length;
    }

    @Override
    public void abort(TxFrame frame) {
        freeTx[freeTxCount++] = frame.token();
    }

    @Override
    public int flush() {
        final int sent = txPending;
        if (sent > 0) {
            tx.submit(sent);
            txPending = 0;
        }
        if (tx.outstanding() > 0 && tx.needsWakeup()) {
            kick();
        }
        reapCompletions();
        return sent;
    }

    /**
     * Asks the kernel to transmit. In copy mode one {@code sendto} sends a bounded batch (32 frames on Linux) and
     * answers EAGAIN while more wait, so the link repeats while the kernel takes frames; a kernel that is busy
     * (EBUSY, ENOBUFS) is left for the next flush.
     */
    private void kick() {
        int calls = tx.size() / 16 + 2;
        int before = tx.outstanding();
        while (before > 0 && calls-- > 0) {
            txSendCalls++;
            // Without errno first (the capturing downcall allocates until C2 compiles it, see Libc): a call that
            // failed but moved the ring on is EAGAIN in all but name (a batch went, more wait); only a call that moved
            // nothing is made again with errno, to tell busy from broken.
            if (Libc.sendtoWithoutErrno(resources.fd, XdpAbi.MSG_DONTWAIT) < 0 && tx.outstanding() == before
                && Libc.sendto(callState, resources.fd, XdpAbi.MSG_DONTWAIT) < 0) {
                final int errno = Libc.errno(callState);
                if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS) {
                    txErrors++;
                    lastTransmitErrno = errno;
                    return;
                }
                if (errno != EAGAIN) {
                    return;
                }
            }
            final int after = tx.outstanding();
            if (after == before) {
                return;
            }
            before = after;
        }
    }

    private void reapCompletions() {
        final int n = completion.available(completion.size());
        if (n == 0) {
            return;
        }
        final MemorySegment ring = completion.memory();
        final int first = completion.consumerIndex();
        for (int i = 0; i < n; i++) {
            // Each descriptor completes; a multi-buffer frame's slot is free again with its first chunk (the kernel
            // completes a frame's descriptors together, in ring order, when it has sent the whole frame).
            final long address = ring.get(ValueLayout.JAVA_LONG, completion.entryOffset(first + i));
            if (txSlotSize == chunkSize || (address - txBase) % txSlotSize == 0) {
                freeTx[freeTxCount++] = address;
            }
        }
        completion.release(n);
    }

    /**
     * Blocks up to {@code timeoutMs} (0: check, -1: forever) until {@link #receive} has a frame. For an idle shard or
     * a test; allocates nothing.
     */
    @Override
    public boolean canAwaitFrames() {
        return true;
    }

    @Override
    public boolean awaitFrames(int timeoutMs) {
        if (rx.available(1) > 0) {
            return true;
        }
        if (wake.awaitBeside(callState, pollFd, resources.fd, XdpAbi.POLLIN, timeoutMs)) {
            woken++;
        }
        return rx.available(1) > 0;
    }

    /**
     * Bumps the event counter that {@link #awaitFrames} polls beside the socket (one {@code write(2)}): a frame handed
     * over by another shard, or work an application thread queued, is served now, not when the owner's sleep of up to
     * a millisecond ends. Closing waits for a wake in progress, so no write reaches a closed (or reused) descriptor.
     */
    @Override
    public boolean wakeAwaitingThread() {
        return wake.wake();
    }

    /**
     * Steers frames for the group MAC to Tern (the steering program's group map). On a shared interface the kernel no
     * longer sees that group there: an XDP program cannot give one frame to both. The all-systems group stays the
     * kernel's. On a NIC the MAC must also pass its multicast filter (a kernel member of the group, or
     * {@code ip maddr add}); veth passes every frame.
     *
     * @throws IllegalStateException when the kernel refuses (more than {@value XdpSteering#MAX_GROUPS} groups)
     */
    @Override
    public void addMulticast(long groupMac) {
        requireMulticast(groupMac);
        final int errno = resources.steering.addGroup(groupMac);
        if (errno != 0) {
            throw new IllegalStateException("afxdp: cannot steer group " + MacAddress.format(groupMac) + " to Tern: "
                + Libc.errnoName(errno));
        }
    }

    @Override
    public void removeMulticast(long groupMac) {
        requireMulticast(groupMac);
        resources.steering.removeGroup(groupMac);
    }

    /**
     * Steers frames for the IPv6 address to Tern (the steering program's address map), and the neighbour
     * solicitations and advertisements about it that go to multicast groups; the kernel keeps its own addresses and
     * the rest of IPv6 multicast (router advertisements, MLD queries).
     *
     * @throws IllegalStateException when the kernel refuses (more than {@value XdpSteering#MAX_ADDRESSES6} addresses)
     */
    @Override
    public void addIpv6Address(long high, long low) {
        final int errno = resources.steering.addAddress6(high, low);
        if (errno != 0) {
            throw new IllegalStateException("afxdp: cannot steer " + new Ipv6Address(high, low) + " to Tern: "
                + Libc.errnoName(errno));
        }
    }

    @Override
    public void removeIpv6Address(long high, long low) {
        resources.steering.removeAddress6(high, low);
    }

    /** True: the kernel keeps the interface, its MAC and its addresses; the program hands Tern only its own frames. */
    @Override
    public boolean sharesInterfaceWithKernel() {
        return true;
    }

    private static void requireMulticast(long groupMac) {
        if (!MacAddress.isMulticast(groupMac) || MacAddress.isBroadcast(groupMac)) {
            throw new IllegalArgumentException(MacAddress.format(groupMac) + " is not a multicast MAC address");
        }
    }

    /**
     * Sets or clears the steering program's shedding flag ({@link XdpSteering#shedSyns}, one {@code bpf()} call per
     * change): while it is set, the program drops seven in eight IPv4 TCP segments for Tern that carry SYN without ACK
     * or RST, before they take a slot of the RX ring, and counts them ({@code afxdp.rx.syn_shed}). The frames already
     * in the ring stay. Asking for the state the link is in changes nothing and returns true. False when the kernel
     * refuses the update, or to turn shedding on once the link is closed (the program and its maps went with it).
     */
    @Override
    public boolean shedUnsolicitedSyns(boolean shed) {
        if (closed) {
            sheddingSyns = false;
            return !shed;
        }
        if (shed == sheddingSyns) {
            return true;
        }
        if (resources.steering.shedSyns(shed) != 0) {
            return false;
        }
        sheddingSyns = shed;
        return true;
    }

    /**
     * Sheds every SYN from the first {@code count} of {@code sources} in the steering program ({@link
     * XdpSteering#shedSynsFrom}: a hash map of the sources, and a bit of the shedding flag), at most {@value
     * XdpSteering#MAX_SHED_SOURCES}; other sources' SYNs pass unless {@link #shedUnsolicitedSyns} is on as well. 0 ends
     * it. Shed SYNs are counted with the others ({@code afxdp.rx.syn_shed}). False when the kernel refuses an update, for
     * more sources than that, or for any source once the link is closed. Cold path: a {@code bpf()} call per source that
     * comes or goes.
     */
    @Override
    public boolean shedSynsFrom(int[] sources, int count) {
        if (closed) {
            return count == 0;
        }
        if (count < 0 || count > XdpSteering.MAX_SHED_SOURCES || count > sources.length) {
            return false;
        }
        return resources.steering.shedSynsFrom(sources, count) == 0;
    }

    @Override
    public String[] statisticNames() {
        return STATISTIC_NAMES.clone();
    }

    /**
     * Fills the counters of {@link #statisticNames()}; reads the kernel's XDP_STATISTICS with one getsockopt and the
     * program's count of shed SYNs with one {@code bpf()} lookup.
     */
    @Override
    public void statistics(long[] values) {
        if (!closed) {
            statisticsLength.set(ValueLayout.JAVA_INT, 0, XdpAbi.STATISTICS_SIZE);
            if (Libc.getsockopt(callState, resources.fd, XdpAbi.SOL_XDP, XdpAbi.XDP_STATISTICS, statistics, statisticsLength) < 0) {
                statistics.fill((byte) 0);
            }
            final long shed = resources.steering.synsShed();
            if (shed >= 0) {
                rxSynShed = shed;
            }
        }
        values[0] = zeroCopy ? 1 : 0;
        values[1] = resources.steering != null && resources.steering.nativeMode() ? 1 : 0;
        values[2] = rxFrames;
        values[3] = rxBytes;
        values[4] = rxTooLong;
        values[5] = statistics.get(ValueLayout.JAVA_LONG, XdpAbi.STAT_RX_DROPPED);
        values[6] = statistics.get(ValueLayout.JAVA_LONG, XdpAbi.STAT_RX_INVALID_DESCS);
        values[7] = statistics.get(ValueLayout.JAVA_LONG, XdpAbi.STAT_RX_RING_FULL);
        values[8] = statistics.get(ValueLayout.JAVA_LONG, XdpAbi.STAT_RX_FILL_RING_EMPTY);
        values[9] = rxFillShort;
        values[10] = rxWakeups;
        values[11] = txFrames;
        values[12] = txBytes;
        values[13] = txRingFull;
        values[14] = txRejected;
        values[15] = statistics.get(ValueLayout.JAVA_LONG, XdpAbi.STAT_TX_INVALID_DESCS);
        values[16] = statistics.get(ValueLayout.JAVA_LONG, XdpAbi.STAT_TX_RING_EMPTY);
        values[17] = txSendCalls;
        values[18] = txErrors;
        values[19] = busyPoll ? 1 : 0;
        values[20] = rxSynShed;
        values[21] = rxBusyPolls;
        values[22] = woken;
    }

    /** Whether the socket is bound zero-copy (else copy mode). */
    public boolean zeroCopy() {
        return zeroCopy;
    }

    /** Whether the steering program runs in native (driver) XDP mode (else generic, SKB mode). */
    public boolean nativeXdp() {
        return resources.steering.nativeMode();
    }

    /** "zero-copy, native XDP" or "copy mode, generic XDP" and so on, for start-up lines. */
    public String mode() {
        return (zeroCopy ? "zero-copy" : "copy mode") + ", " + (nativeXdp() ? "native XDP" : "generic (SKB) XDP")
            + (busyPoll ? ", busy polling" : "");
    }

    public String interfaceName() {
        return interfaceName;
    }

    public int interfaceIndex() {
        return interfaceIndex;
    }

    /** errno of the last transmit kick that failed with something other than EAGAIN/EBUSY/ENOBUFS, or 0. */
    public int lastTransmitErrno() {
        return lastTransmitErrno;
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
        return name() + " " + MacAddress.format(mac) + " mtu " + mtu + " " + mode();
    }

    /** Everything an open link holds from the kernel, released together (also when open fails half way). */
    private static final class Resources {
        final Arena arena = Arena.ofShared();
        final MemorySegment callState = Libc.newCallState(arena);
        int fd = -1;
        int eventFd = -1;
        XdpSteering steering;
        final long[] maps = new long[8];
        int mapCount;

        XskRing ring(int fd, MemorySegment offsets, int base, long pageOffset, int entrySize, int entries, String name) {
            final long producer = offsets.get(ValueLayout.JAVA_LONG, base + XdpAbi.RING_OFFSET_PRODUCER);
            final long consumer = offsets.get(ValueLayout.JAVA_LONG, base + XdpAbi.RING_OFFSET_CONSUMER);
            final long desc = offsets.get(ValueLayout.JAVA_LONG, base + XdpAbi.RING_OFFSET_DESC);
            final long flags = offsets.get(ValueLayout.JAVA_LONG, base + XdpAbi.RING_OFFSET_FLAGS);
            final long length = desc + (long) entries * entrySize;
            final long address = Libc.mmap(callState, length, XdpAbi.PROT_READ | XdpAbi.PROT_WRITE,
                XdpAbi.MAP_SHARED | XdpAbi.MAP_POPULATE, fd, pageOffset);
            if (address == -1) {
                throw new SysException("mmap(" + name + " ring)", Libc.errno(callState));
            }
            maps[mapCount++] = address;
            maps[mapCount++] = length;
            // Tied to the arena: after close an access fails instead of touching unmapped memory.
            final MemorySegment memory = MemorySegment.ofAddress(address).reinterpret(length, arena, null);
            return new XskRing(memory, producer, consumer, flags, desc, entrySize, entries);
        }

        void release() {
            try (Arena scratch = Arena.ofConfined()) {
                final MemorySegment state = Libc.newCallState(scratch);
                if (steering != null) {
                    steering.close();
                }
                arena.close();
                for (int i = 0; i < mapCount; i += 2) {
                    Libc.munmap(state, maps[i], maps[i + 1]);
                }
                mapCount = 0;
                if (fd >= 0) {
                    Libc.close(state, fd);
                    fd = -1;
                }
                if (eventFd >= 0) {
                    Libc.close(state, eventFd);
                    eventFd = -1;
                }
            }
        }
    }
}
