package dev.tern.tcp;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.io.ByteRing;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.ShardPorts;
import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv4.wire.IpProtocol;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static dev.tern.tcp.TcpControlBlocks.EV_CLOSED;
import static dev.tern.tcp.TcpControlBlocks.EV_ESTABLISHED;
import static dev.tern.tcp.TcpControlBlocks.EV_READABLE;
import static dev.tern.tcp.TcpControlBlocks.EV_WRITABLE;
import static dev.tern.tcp.TcpControlBlocks.F_ACCEPT_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_ACK_NOW;
import static dev.tern.tcp.TcpControlBlocks.F_ALLOCATED;
import static dev.tern.tcp.TcpControlBlocks.F_BUDGET_RETURNED;
import static dev.tern.tcp.TcpControlBlocks.F_BUFFERS_RESERVED;
import static dev.tern.tcp.TcpControlBlocks.F_CLOSED_SIGNALLED;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_SENT;
import static dev.tern.tcp.TcpControlBlocks.F_IN_SYN_QUEUE;
import static dev.tern.tcp.TcpControlBlocks.F_IN_TABLE;
import static dev.tern.tcp.TcpControlBlocks.F_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.F_NO_DELAY;
import static dev.tern.tcp.TcpControlBlocks.F_OWNED;
import static dev.tern.tcp.TcpControlBlocks.F_PASSIVE;
import static dev.tern.tcp.TcpControlBlocks.F_RELEASED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;
import static dev.tern.tcp.TcpControlBlocks.F_SACK;
import static dev.tern.tcp.TcpControlBlocks.F_TIMESTAMPS;
import static dev.tern.tcp.TcpControlBlocks.F_TIME_WAIT_LISTED;
import static dev.tern.tcp.TcpControlBlocks.F_WINDOW_SCALING;
import static dev.tern.tcp.TcpControlBlocks.T_DELAYED_ACK;
import static dev.tern.tcp.TcpControlBlocks.T_KEEPALIVE;
import static dev.tern.tcp.TcpControlBlocks.T_PACE;
import static dev.tern.tcp.TcpControlBlocks.T_SENDER;
import static dev.tern.tcp.TcpControlBlocks.T_STATE;

/**
 * TCP for one stack shard (RFC 9293): connections, listeners and the handle-based core API the socket layer wraps.
 *
 * <h2>Handles</h2>
 * A connection handle is {@code generation << 20 | slot} (a non-negative int): the slot is the connection's row in
 * the {@link TcpControlBlocks}, the generation makes a handle of an earlier connection in the same slot invalid.
 * A handle stays valid until its owner calls {@link #close} or {@link #abort}, even after the connection ended, so
 * the owner can read what is left and {@link #error}. Listener handles are small ints of their own.
 *
 * <h2>Buffers</h2>
 * Each connection has a send and a receive {@link ByteRing} (off-heap, single producer / single consumer): the owner
 * writes the send ring and calls {@link #sendable}, reads the receive ring and calls {@link #consumed}. The rings
 * may be used from another thread (that is their purpose); every method of this class runs on the stack thread.
 *
 * <h2>The poll loop</h2>
 * Segments arrive through {@link #onPacket} (IPv4 input), timers through the shard's {@link Timers}. Connections that
 * need to send after input are queued, and so are events; {@link #poll} delivers the events (so an application's
 * reply can carry the ACK), then serves the output queue, one pass per connection, however many segments arrived.
 * The stack calls it once per turn after receiving and firing timers, and before flushing the link:
 * <pre>{@code  ethernet.poll(now) -> ipv4.pollLoopback(now) -> timers.poll(now) -> tcp.poll(now) -> ethernet.flush()}</pre>
 *
 * <p>Owned by the shard thread; not thread-safe. Nothing here allocates per segment.
 */
public final class TcpLayer implements IpProtocolHandler, AutoCloseable {
    /** The congestion controls every layer knows by name (more may be registered, {@link #registerCongestionControl}). */
    public static final java.util.List<String> BUILT_IN_CONGESTION_CONTROLS = java.util.List.of(
        CubicCongestionControl.NAME, NewRenoCongestionControl.NAME, NoCongestionControl.NAME);
    private static final int SLOT_BITS = 20;
    private static final int SLOT_MASK = (1 << SLOT_BITS) - 1;
    /** RFC 9293 §3.8.6.3 leaves quick ACKs at the start to the implementation; Linux allows up to 16. */
    private static final int QUICK_ACKS = 16;
    private static final long NEIGHBOUR_CONFIRM_NS = 1_000_000_000L;
    /**
     * Heap bytes per slot in the arrays below: six references (compressed, 4 bytes: rings, record, trace, owner and
     * receive handler), four ints
     * (buffer sizes, two queue entries), one long (neighbour confirmation time), two booleans (queued flags).
     */
    private static final int PER_SLOT_HEAP_BYTES = 6 * 4 + 4 * 4 + 8 + 2;

    final Ipv4Layer ipv4;
    final TcpConfig config;
    final TcpCounters counters;
    final TcpControlBlocks tcb;
    final ConnectionTable connections;
    final ReassemblyQueue reassembly;
    final RingPool rings = new RingPool();
    final IsnGenerator isn;
    final SynCookies cookies;
    final RttEstimator rtt;
    final TcpOutput output;
    final TcpTimers tcpTimers;
    final TcpSender sender;
    final TcpReceiver receiver;
    final TcpInput input;
    final TcpMemoryPressure memoryPressure;
    private final int localAddress;

    final ByteRing[] sendRings;
    final ByteRing[] receiveRings;
    /** Each connection's record of sent segments, attached with its rings. */
    final SentSegments[] sentSegments;
    /** Each connection's trace, or null (off). */
    final TcpTrace[] traces;
    final int[] sendSize;
    final int[] receiveSize;
    private final TcpEvents[] owners;
    /** Each connection's zero-copy receive handler, or null (the owner reads the receive ring). */
    final TcpReceiveHandler[] receiveHandlers;
    /** True while a receive handler runs: what it may not do is refused, what it may do is deferred. */
    private boolean inReceiveHandler;
    /**
     * Bytes a connection's handler holds in lent frames ({@link #holdOffered}): taken from the stream, not yet given
     * back, so the window leaves room for them as it does for unread bytes in the ring.
     */
    final int[] heldBytes;
    private final FrameHolds holds;
    private final FrameHolds.Owner holdReturned = this::holdReleased;
    private final long[] lastConfirmNs;

    private final PlugPoints<CongestionControl> congestionControls = new PlugPoints<>("congestion control");
    private final PlugPoints<LossDetection> lossDetections = new PlugPoints<>("loss detection");
    private final PlugPoints<LossRecovery> recoveries = new PlugPoints<>("loss recovery");
    private final int defaultCongestionControl;
    private final int defaultLossDetection;
    private final int defaultRecovery;
    private final int dupAckDetection;
    private final int newRenoRecovery;

    // Listeners: small on-heap arrays, indexed by listener handle.
    private final int[] listenerByPort = new int[65536];
    private int[] listenerPort = new int[8];
    private int[] listenerBacklog = new int[8];
    private int[] listenerSynCount = new int[8];
    private int[][] acceptQueue = new int[8][];
    private int[] acceptHead = new int[8];
    private int[] acceptCount = new int[8];
    private long[] lastCookieNs = new long[8];
    private boolean[] cookiesSent = new boolean[8];
    private boolean[] listenerEventPending = new boolean[8];
    private TcpEvents[] listenerEvents = new TcpEvents[8];
    private TcpOptions[] listenerOptions = new TcpOptions[8];
    private int listenerSlots;

    // Work queues: connections to serve at the next poll, connections and listeners with pending events.
    private final int[] outputQueue;
    private final boolean[] outputQueued;
    private int outputHead;
    private int outputCount;
    private final int[] eventQueue;
    private final boolean[] eventQueued;
    private int eventHead;
    private int eventCount;
    private boolean dispatching;
    /** See {@link #receivePressure()}. */
    private boolean receivePressure;

    /**
     * Buffer bytes reserved by connections let in, attached or not, less those of connections idling without buffers
     * ({@link #releaseIdleBuffers}): what the memory budget counts.
     */
    private long reservedBytes;
    private int timeWaitHead = -1;
    private int timeWaitTail = -1;
    private int timeWaitCount;
    private long challengeWindowNs;
    private int challengeCount;
    private int ephemeralCounter;
    /** The ephemeral ports whose replies reach this layer's shard (all of them for a stack of its own). */
    private ShardPorts shardPorts = ShardPorts.ALONE;

    public TcpLayer(Ipv4Layer ipv4, Timers timers, TcpConfig config, CountersFile counters) {
        this.ipv4 = ipv4;
        this.config = config;
        this.counters = new TcpCounters(counters);
        this.localAddress = ipv4.address().address();
        final int capacity = config.maxConnections();
        this.tcb = new TcpControlBlocks(capacity);
        this.connections = new ConnectionTable(capacity, config.isnKey0() ^ Long.rotateLeft(config.isnKey1(), 17));
        this.reassembly = new ReassemblyQueue(Math.min(config.outOfOrderBlocks(), capacity), config.outOfOrderRanges());
        this.isn = new IsnGenerator(config.isnKey0(), config.isnKey1(), config.fixedIsn());
        this.cookies = new SynCookies(config.isnKey0(), config.isnKey1());
        this.rtt = new RttEstimator(config);
        this.sendRings = new ByteRing[capacity];
        this.receiveRings = new ByteRing[capacity];
        this.sentSegments = new SentSegments[capacity];
        this.traces = new TcpTrace[capacity];
        this.sendSize = new int[capacity];
        this.receiveSize = new int[capacity];
        this.owners = new TcpEvents[capacity];
        this.receiveHandlers = new TcpReceiveHandler[capacity];
        this.heldBytes = new int[capacity];
        this.holds = ipv4.ethernet().holds();
        this.lastConfirmNs = new long[capacity];
        this.outputQueue = new int[capacity];
        this.outputQueued = new boolean[capacity];
        this.eventQueue = new int[capacity];
        this.eventQueued = new boolean[capacity];
        Arrays.fill(listenerByPort, -1);
        this.output = new TcpOutput(this, tcb, ipv4, this.counters);
        this.sender = new TcpSender(this, tcb, output, ipv4, this.counters, rtt, config);
        this.receiver = new TcpReceiver(this, tcb, output, reassembly, this.counters, config);
        output.receiver(receiver);
        this.tcpTimers = new TcpTimers(this, tcb, timers);
        sender.timers(tcpTimers);
        receiver.timers(tcpTimers);
        this.input = new TcpInput(this, tcb, output, sender, receiver, rtt, this.counters, config);
        this.memoryPressure = new TcpMemoryPressure(this, tcb, this.counters, config);
        congestionControls.register(new CubicCongestionControl());
        congestionControls.register(new NewRenoCongestionControl());
        congestionControls.register(new NoCongestionControl());
        lossDetections.register(new RackLossDetection());
        dupAckDetection = lossDetections.register(new DupAckLossDetection());
        recoveries.register(new PrrRecovery());
        recoveries.register(new Rfc6675Recovery());
        newRenoRecovery = recoveries.register(new NewRenoRecovery());
        this.defaultCongestionControl = congestionControls.require(config.congestionControl());
        this.defaultLossDetection = lossDetections.require(config.lossDetection());
        this.defaultRecovery = recoveries.require(config.recovery());
        ipv4.register(IpProtocol.TCP, this);
    }

    /** Makes a congestion control selectable by its name (cold path). A later one with the same name replaces it. */
    public void registerCongestionControl(CongestionControl congestionControl) {
        congestionControls.register(congestionControl);
    }

    /** Makes a loss detection selectable by its name (cold path). A later one with the same name replaces it. */
    public void registerLossDetection(LossDetection lossDetection) {
        lossDetections.register(lossDetection);
    }

    /** Makes a loss recovery selectable by its name (cold path). A later one with the same name replaces it. */
    public void registerLossRecovery(LossRecovery recovery) {
        recoveries.register(recovery);
    }

    /** Names of the congestion controls connections may choose, in registration order. */
    public java.util.List<String> congestionControlNames() {
        return congestionControls.names();
    }

    /** Names of the loss detections connections may choose. */
    public java.util.List<String> lossDetectionNames() {
        return lossDetections.names();
    }

    /** Names of the loss recoveries connections may choose. */
    public java.util.List<String> lossRecoveryNames() {
        return recoveries.names();
    }

    public TcpConfig config() {
        return config;
    }

    // ------------------------------------------------------------------------------------------- handles

    private int handle(int c) {
        return (tcb.generation(c) << SLOT_BITS) | c;
    }

    /** The slot of a valid, owned handle, or -1. */
    private int slot(int handle) {
        if (handle < 0) {
            return -1;
        }
        final int c = handle & SLOT_MASK;
        if (c >= tcb.capacity() || (tcb.flags(c) & (F_ALLOCATED | F_OWNED | F_RELEASED)) != (F_ALLOCATED | F_OWNED)
            || tcb.generation(c) != handle >>> SLOT_BITS) {
            return -1;
        }
        return c;
    }

    // ------------------------------------------------------------------------------------------- listeners

    /** {@link #listen(int, int, TcpOptions, TcpEvents)} with default options. */
    public int listen(int localPort, int backlog, TcpEvents events) {
        return listen(localPort, backlog, TcpOptions.DEFAULT, events);
    }

    /**
     * Listens on {@code localPort} (RFC 9293 §3.10.1, passive OPEN); accepted connections get {@code options} and
     * report to {@code events}. Returns a listener handle, or {@code -ADDRESS_IN_USE} / {@code -INVALID}. Cold path.
     */
    public int listen(int localPort, int backlog, TcpOptions options, TcpEvents events) {
        if (localPort < 1 || localPort > 65535 || backlog < 0 || events == null || options == null) {
            return -TcpError.INVALID;
        }
        if (!knownPlugPoints(options)) {
            return -TcpError.INVALID;
        }
        if (listenerByPort[localPort] >= 0) {
            return -TcpError.ADDRESS_IN_USE;
        }
        int l = 0;
        while (l < listenerSlots && listenerEvents[l] != null) {
            l++;
        }
        if (l == listenerPort.length) {
            growListeners();
        }
        listenerSlots = Math.max(listenerSlots, l + 1);
        final int queue = Math.max(1, Math.min(backlog == 0 ? 1 : backlog, config.maxBacklog()));
        listenerPort[l] = localPort;
        listenerBacklog[l] = queue;
        listenerSynCount[l] = 0;
        acceptQueue[l] = new int[queue];
        acceptHead[l] = 0;
        acceptCount[l] = 0;
        cookiesSent[l] = false;
        listenerEventPending[l] = false;
        listenerEvents[l] = events;
        listenerOptions[l] = options;
        listenerByPort[localPort] = l;
        return l;
    }

    private void growListeners() {
        final int size = listenerPort.length * 2;
        listenerPort = Arrays.copyOf(listenerPort, size);
        listenerBacklog = Arrays.copyOf(listenerBacklog, size);
        listenerSynCount = Arrays.copyOf(listenerSynCount, size);
        acceptQueue = Arrays.copyOf(acceptQueue, size);
        acceptHead = Arrays.copyOf(acceptHead, size);
        acceptCount = Arrays.copyOf(acceptCount, size);
        lastCookieNs = Arrays.copyOf(lastCookieNs, size);
        cookiesSent = Arrays.copyOf(cookiesSent, size);
        listenerEventPending = Arrays.copyOf(listenerEventPending, size);
        listenerEvents = Arrays.copyOf(listenerEvents, size);
        listenerOptions = Arrays.copyOf(listenerOptions, size);
    }

    private boolean validListener(int l) {
        return l >= 0 && l < listenerSlots && listenerEvents[l] != null;
    }

    /**
     * Takes the oldest established connection from the listener's accept queue; returns its handle or -1 when there is
     * none. Data may already wait in its receive ring.
     */
    public int accept(int listener) {
        if (!validListener(listener) || acceptCount[listener] == 0) {
            return -1;
        }
        final int[] queue = acceptQueue[listener];
        final int c = queue[acceptHead[listener]];
        acceptHead[listener] = (acceptHead[listener] + 1) % queue.length;
        acceptCount[listener]--;
        tcb.clearFlag(c, F_ACCEPT_QUEUED);
        tcb.setFlag(c, F_OWNED);
        counters.accepted.incrementRelease();
        final int state = tcb.state(c);
        if (state == TcpState.TIME_WAIT || state == TcpState.CLOSED) {
            signal(c, EV_CLOSED);
        } else if (state != TcpState.ESTABLISHED) {
            signal(c, EV_READABLE);
        }
        return handle(c);
    }

    /** Connections waiting in the accept queue. */
    public int acceptable(int listener) {
        return validListener(listener) ? acceptCount[listener] : 0;
    }

    /** Stops listening; half-open and not yet accepted connections are reset (as Linux does). */
    public void closeListener(int listener, long nowNs) {
        if (!validListener(listener)) {
            return;
        }
        while (acceptCount[listener] > 0) {
            final int[] queue = acceptQueue[listener];
            final int c = queue[acceptHead[listener]];
            acceptHead[listener] = (acceptHead[listener] + 1) % queue.length;
            acceptCount[listener]--;
            tcb.clearFlag(c, F_ACCEPT_QUEUED);
            if (TcpState.isSynchronized(tcb.state(c)) && tcb.state(c) != TcpState.TIME_WAIT) {
                output.sendReset(c, nowNs);
            }
            free(c);
        }
        for (int c = 0; c < tcb.capacity() && listenerSynCount[listener] > 0; c++) {
            if (tcb.hasFlag(c, F_IN_SYN_QUEUE) && tcb.listener(c) == listener) {
                output.sendReset(c, nowNs);
                free(c);
            }
        }
        listenerByPort[listenerPort[listener]] = -1;
        listenerEvents[listener] = null;
        listenerOptions[listener] = null;
        acceptQueue[listener] = null;
    }

    int listenerOn(int port) {
        return listenerByPort[port];
    }

    boolean acceptQueueFull(int l) {
        return acceptCount[l] >= listenerBacklog[l];
    }

    /**
     * Whether the link's receive ring was half full or more when this poll began ({@link #receivePressure(boolean)},
     * set by the stack each poll): segments that would open or answer for no connection are then dropped.
     */
    boolean receivePressure() {
        return receivePressure;
    }

    /** Tells the layer, once per poll before the frames are handled, whether the link is under receive pressure. */
    public void receivePressure(boolean underPressure) {
        receivePressure = underPressure;
    }

    /**
     * A segment dropped because the listener's accept queue is full: Linux's ListenOverflows, which also counts in
     * ListenDrops; {@code tcp.drop.listen_overflow} counts the same segments by reason.
     */
    void listenOverflow() {
        counters.listenOverflows.incrementRelease();
        counters.listenDrops.incrementRelease();
        counters.drop(TcpCounters.DROP_LISTEN_OVERFLOW);
    }

    /** A segment for a listener dropped for another reason (SYN queue full without cookies, no row, memory). */
    void listenDrop(int reason) {
        counters.listenDrops.incrementRelease();
        counters.drop(reason);
    }

    boolean synQueueFull(int l) {
        return listenerSynCount[l] >= config.synQueueSize();
    }

    void cookieSent(int l, long nowNs) {
        cookiesSent[l] = true;
        lastCookieNs[l] = nowNs;
    }

    /** Only ACKs arriving soon after we sent cookies are checked as cookies (Linux: no recent SYN queue overflow). */
    boolean cookiesRecentlySent(int l, long nowNs) {
        return cookiesSent[l] && nowNs - lastCookieNs[l] < (2L << 36);
    }

    int listenerReceiveSize(int l) {
        final int size = listenerOptions[l].receiveBufferSize();
        return size == 0 ? config.receiveBufferSize() : size;
    }

    // ------------------------------------------------------------------------------------------ connect

    /**
     * Opens a connection (RFC 9293 §3.10.1, active OPEN) from {@code localPort} (0: an ephemeral port, RFC 6056) to
     * {@code remoteAddress:remotePort}; the SYN leaves at once. Returns a connection handle, or a negated
     * {@link TcpError}: {@code INVALID}, {@code ADDRESS_IN_USE}, {@code ADDRESS_NOT_AVAILABLE},
     * {@code TOO_MANY_CONNECTIONS}, {@code NET_UNREACHABLE} (also for a broadcast or multicast address, as Linux).
     * Completion is reported by {@link TcpEvents#established} or {@link TcpEvents#closed}.
     */
    public int connect(int remoteAddress, int remotePort, int localPort, TcpOptions options, TcpEvents events,
                       long nowNs) {
        if (remotePort < 1 || remotePort > 65535 || localPort < 0 || localPort > 65535 || events == null
            || options == null || remoteAddress == 0) {
            return -TcpError.INVALID;
        }
        if (dev.tern.core.net.Ipv4Address.isMulticast(remoteAddress)
            || remoteAddress == dev.tern.core.net.Ipv4Address.LIMITED_BROADCAST
            || remoteAddress == ipv4.address().broadcast()) {
            // RFC 9293 MUST-46 (RFC 1122 §4.2.3.10): TCP is unicast only; an OPEN to a broadcast or multicast
            // address is an error, not a SYN sent to every host. Linux's tcp_v4_connect answers ENETUNREACH.
            return -TcpError.NET_UNREACHABLE;
        }
        if (!knownPlugPoints(options)) {
            return -TcpError.INVALID;
        }
        int port = localPort;
        if (port == 0) {
            port = ephemeralPort(remoteAddress, remotePort);
            if (port < 0) {
                return -TcpError.ADDRESS_NOT_AVAILABLE;
            }
        } else if (listenerByPort[port] >= 0
            || connections.get(ConnectionTable.key(remoteAddress, remotePort, port)) >= 0) {
            // As Linux's bind(): a port a listener holds, or the same 4-tuple, is taken.
            return -TcpError.ADDRESS_IN_USE;
        }
        final int c = newConnection(remoteAddress, remotePort, port, options, events, nowNs);
        if (c == NO_MEMORY) {
            counters.drop(TcpCounters.DROP_MEMORY_LIMIT);
            return -TcpError.NO_BUFFER;
        }
        if (c < 0) {
            return -TcpError.TOO_MANY_CONNECTIONS;
        }
        reserveBuffers(c);
        tcb.setFlag(c, F_OWNED);
        sender.init(c, tcb.iss(c));
        transition(c, TcpState.SYN_SENT, nowNs);
        counters.activeOpens.incrementRelease();
        final int result = sendSyn(c, nowNs);
        if (result == Ipv4Layer.ERR_NO_ROUTE) {
            free(c);
            return -TcpError.NET_UNREACHABLE;
        }
        return handle(c);
    }

    /** On a shard of a sharded stack, an active open's ephemeral port is one of {@code ports}. Cold path. */
    public void shardPorts(ShardPorts ports) {
        shardPorts = java.util.Objects.requireNonNull(ports);
    }

    /**
     * RFC 6056 algorithm 3: a keyed start per destination, then the first port whose 4-tuple is free and, on a shard
     * of several, whose replies reach this shard (about one port in the shard count).
     */
    private int ephemeralPort(int remoteAddress, int remotePort) {
        final int first = config.ephemeralFirst();
        final int range = config.ephemeralLast() - first + 1;
        final int offset = isn.portOffset(localAddress, remoteAddress, remotePort);
        for (int i = 0; i < range; i++) {
            final int port = first + (int) (((long) offset + ephemeralCounter + i) % range);
            if (shardPorts.repliesReach(localAddress, port, remoteAddress, remotePort)
                && listenerByPort[port] < 0 && connections.get(ConnectionTable.key(remoteAddress, remotePort, port)) < 0) {
                ephemeralCounter += i + 1;
                return port;
            }
        }
        return -1;
    }

    /** {@link #newConnection} and {@link #newPassive}: the socket buffer memory limit is reached. */
    static final int NO_MEMORY = -2;

    /**
     * A row for a new connection, in the table, with options applied; not yet in any state. Returns -1 when the
     * table is full, {@link #NO_MEMORY} when its buffers would take socket memory beyond the configured limit.
     */
    private int newConnection(int remoteAddress, int remotePort, int localPort, TcpOptions options, TcpEvents events,
                              long nowNs) {
        int sendBytes = options.sendBufferSize() == 0 ? config.sendBufferSize() : options.sendBufferSize();
        int receiveBytes = options.receiveBufferSize() == 0 ? config.receiveBufferSize() : options.receiveBufferSize();
        final long inUse = reservedBytes;
        if (inUse >= config.memoryPressureBytes()) {
            // Linux's tcp_mem pressure: new connections get smaller buffers (their windows are smaller from the
            // first segment on, so nothing promised is taken back).
            sendBytes = underPressure(sendBytes);
            receiveBytes = underPressure(receiveBytes);
            counters.memoryPressureOpens.incrementRelease();
        }
        if (inUse + sendBytes + receiveBytes + TcpMemory.recordBytes(sendBytes) > config.memoryLimitBytes()) {
            return NO_MEMORY;
        }
        int c = tcb.allocate();
        if (c < 0 && recycleTimeWait()) {
            c = tcb.allocate();
        }
        if (c < 0) {
            return -1;
        }
        tcb.localAddress(c, localAddress);
        tcb.remoteAddress(c, remoteAddress);
        tcb.localPort(c, localPort);
        tcb.remotePort(c, remotePort);
        tcb.iss(c, isn.isn(localAddress, localPort, remoteAddress, remotePort, nowNs));
        tcb.tsOffset(c, isn.timestampOffset(localAddress, localPort, remoteAddress, remotePort));
        sendSize[c] = sendBytes;
        receiveSize[c] = receiveBytes;
        int flags = tcb.flags(c) | F_IN_TABLE;
        if (options.noDelay()) {
            flags |= F_NO_DELAY;
        }
        if (options.keepalive()) {
            flags |= F_KEEPALIVE;
        }
        if (config.timestamps()) {
            flags |= F_TIMESTAMPS;
        }
        if (config.sack()) {
            flags |= F_SACK;
        }
        if (config.windowScaling()) {
            flags |= F_WINDOW_SCALING;
            int scale = 0;
            while (scale < 14 && (receiveSize[c] >>> scale) > 65535) {
                scale++;
            }
            tcb.rcvScale(c, scale);
        }
        tcb.flags(c, flags);
        tcb.keepIdleMs(c, (int) ((options.keepaliveIdleNs() == 0 ? config.keepaliveIdleNs() : options.keepaliveIdleNs())
            / 1_000_000L));
        tcb.keepIntervalMs(c, (int) ((options.keepaliveIntervalNs() == 0 ? config.keepaliveIntervalNs()
            : options.keepaliveIntervalNs()) / 1_000_000L));
        tcb.keepProbes(c, options.keepaliveProbes() == 0 ? config.keepaliveProbes() : options.keepaliveProbes());
        tcb.ccId(c, options.congestionControl() == null ? defaultCongestionControl
            : congestionControls.id(options.congestionControl()));
        tcb.lossDetectionId(c, options.lossDetection() == null ? defaultLossDetection
            : lossDetections.id(options.lossDetection()));
        tcb.recoveryId(c, options.recovery() == null ? defaultRecovery : recoveries.id(options.recovery()));
        tcb.advMss(c, advertisedMss(remoteAddress, nowNs));
        tcb.sndMss(c, TcpOutput.DEFAULT_MSS);
        tcb.rcvMss(c, Math.min(TcpOutput.DEFAULT_MSS, tcb.advMss(c)));
        tcb.finPosition(c, -1);
        tcb.lastReceiveNs(c, nowNs);
        tcb.lastSendNs(c, nowNs);
        tcb.lastOowAckNs(c, nowNs - 1_000_000_000L);
        rtt.init(tcb, c);
        owners[c] = events;
        lastConfirmNs[c] = nowNs;
        connections.put(ConnectionTable.key(remoteAddress, remotePort, localPort), c);
        return c;
    }

    /** A buffer size under memory pressure: a quarter, but not below 4 KiB (nor above what it was). */
    static int underPressure(int size) {
        return Math.min(size, Math.max(size >>> 2, 4096));
    }

    /** A connection made by a listener for a SYN (or a cookie): SYN-RECEIVED's row, counted in the SYN queue. */
    int newPassive(int l, int remoteAddress, int remotePort, int localPort, long nowNs) {
        final TcpOptions options = listenerOptions[l];
        final int c = newConnection(remoteAddress, remotePort, localPort, options, listenerEvents[l], nowNs);
        if (c < 0) {
            return c;
        }
        tcb.setFlag(c, F_PASSIVE | F_IN_SYN_QUEUE);
        tcb.listener(c, l);
        listenerSynCount[l]++;
        return c;
    }

    /** The MSS we offer towards {@code remote}: the path MTU (itself at most the link MTU) less 40 bytes of headers. */
    int advertisedMss(int remote, long nowNs) {
        return pathMss(remote, nowNs);
    }

    /** Largest payload the path to {@code remote} carries without options (RFC 9293 §3.7.1, RFC 1191). */
    int pathMss(int remote, long nowNs) {
        final int mtu = remote == localAddress ? ipv4.mtu() : ipv4.pathMtus().mtu(remote, ipv4.mtu(), nowNs);
        return Math.max(64, mtu - 40);
    }

    /** Socket buffer bytes of a connection: its two rings and its record of sent segments. */
    private long bufferBytes(int c) {
        return (long) sendSize[c] + receiveSize[c] + TcpMemory.recordBytes(sendSize[c]);
    }

    /**
     * Counts the connection's buffers against the memory budget (Linux charges tcp_mem as buffers fill; we charge
     * their full size when it is let in, so a connection that was let in can always take its rings). The rings
     * themselves come later, when first needed ({@link #ensureRings}): an established connection that carries nothing
     * holds no ring, no record and no heap object, only its row. The charge goes while its owner lets it idle
     * without buffers ({@link #releaseIdleBuffers}) and comes back with its rings.
     */
    private void reserveBuffers(int c) {
        if (!tcb.hasFlag(c, F_BUFFERS_RESERVED)) {
            tcb.setFlag(c, F_BUFFERS_RESERVED);
            reservedBytes += bufferBytes(c);
            publishMemory();
        }
    }

    /**
     * Attaches the connection's rings and record if it has a reservation and none yet: when the owner asks for a ring,
     * when the first data arrives, when a FIN is queued. Returns false when the connection may hold none (it has
     * given its buffers back: TIME-WAIT of an orphan, CLOSED).
     */
    boolean ensureRings(int c) {
        if (tcb.hasFlag(c, F_RINGS)) {
            return true;
        }
        if (!tcb.hasFlag(c, F_BUFFERS_RESERVED)) {
            return false;
        }
        if (tcb.hasFlag(c, F_BUDGET_RETURNED)) {
            // Back from idle: counted again, beyond the limit too. It was let in under the limit, and its peer may
            // send up to the window offered before it idled; refusing the rings would drop that data and cost the
            // peer a retransmission for memory the limit already allowed it. The overshoot is bounded by the
            // connections let in, shows in the budget and its counter, and puts the layer under pressure and at
            // its limit until it falls again (no new connections, windows held to a quarter).
            tcb.clearFlag(c, F_BUDGET_RETURNED);
            reservedBytes += bufferBytes(c);
            if (reservedBytes > config.memoryLimitBytes()) {
                counters.memoryOverLimitAttaches.incrementRelease();
            }
        }
        sendRings[c] = rings.acquire(sendSize[c]);
        receiveRings[c] = rings.acquire(receiveSize[c]);
        sentSegments[c] = rings.acquireRecord(recordEntries(sendSize[c]));
        tcb.clearFlag(c, TcpControlBlocks.F_RECEIVE_RECLAIMED);
        tcb.setFlag(c, F_RINGS);
        counters.ringsAttached.incrementRelease();
        publishMemory();
        return true;
    }

    /** Publishes the memory gauges; the pressure state follows the budget. */
    void publishMemory() {
        memoryPressure.reserved(reservedBytes);
        counters.memoryInUseBytes.setRelease(reservedBytes);
        counters.memoryAttachedBytes.setRelease(rings.inUseBytes());
        counters.memoryMappedBytes.setRelease(rings.allocatedBytes());
        counters.memoryReturnedBytes.setRelease(rings.discardedBytes());
    }

    /**
     * How many segments a connection may have in flight: one per KiB of send buffer (a full-sized segment is 1.4 KiB,
     * so full windows never fill it; a stream of tiny unacknowledged segments does, and waits), 16 at least.
     */
    static int recordEntries(int sendBufferSize) {
        return Math.max(16, Math.min(1 << 20, sendBufferSize >>> 10));
    }

    /** The connection's rings and record go back to the pool. */
    private void releaseRings(int c) {
        rings.release(sendRings[c]);
        rings.release(receiveRings[c]);
        rings.releaseRecord(sentSegments[c]);
        sendRings[c] = null;
        receiveRings[c] = null;
        sentSegments[c] = null;
        tcb.clearFlag(c, F_RINGS);
    }

    /** Gives the rings and record back (if attached) and the reservation with them. */
    private void detachRings(int c) {
        if (tcb.hasFlag(c, F_RINGS)) {
            releaseRings(c);
        }
        if (tcb.hasFlag(c, F_BUFFERS_RESERVED)) {
            if (!tcb.hasFlag(c, F_BUDGET_RETURNED)) {
                reservedBytes -= bufferBytes(c);
            }
            tcb.clearFlag(c, F_BUFFERS_RESERVED | F_BUDGET_RETURNED);
            publishMemory();
        }
    }

    // ---------------------------------------------------------------------------------- state transitions

    /**
     * The handshake completed (SYN-SENT or SYN-RECEIVED to ESTABLISHED, or to FIN-WAIT-1 when the owner already asked
     * for shutdown). A passive connection gets its rings and joins the accept queue. Returns false when that failed.
     */
    boolean establish(int c, long nowNs) {
        if (tcb.hasFlag(c, F_PASSIVE)) {
            final int l = tcb.listener(c);
            if (validListener(l) && acceptQueueFull(l)) {
                // As Linux with tcp_abort_on_overflow = 0: the handshake's last ACK is dropped (ListenOverflows,
                // ListenDrops) and the connection stays half-open in the SYN queue with its SYN-ACK timer running.
                // The peer answers the retransmitted SYN-ACK (or sends its data) and that ACK completes the
                // handshake once the owner has accepted and made room; after synAckRetries it expires.
                listenOverflow();
                return false;
            }
            if (validListener(l) && reservedBytes + bufferBytes(c) > config.memoryLimitBytes()) {
                // Other handshakes completed first and took the memory this one's SYN was let in against. As Linux
                // when it cannot make the child socket (tcp_check_req's listen_overflow, tcp_abort_on_overflow = 0):
                // the last ACK is dropped and counted, and the connection stays half-open in the SYN queue with its
                // SYN-ACK timer running; the peer's retransmitted data, or its answer to the retransmitted SYN-ACK,
                // completes the handshake once closes or idle connections gave budget back. A reset would end a
                // connection the peer already holds open, for a shortage that lasts as long as a burst.
                listenDrop(TcpCounters.DROP_MEMORY_LIMIT);
                if (!tcb.hasFlag(c, F_IN_SYN_QUEUE)) {
                    free(c);    // rebuilt from a cookie just now: no state kept, the peer's retransmission brings it
                }
                return false;
            }
            leaveSynQueue(c);
            if (!validListener(l)) {
                counters.drop(TcpCounters.DROP_NO_SOCKET);
                output.sendReset(c, nowNs);
                free(c);
                return false;
            }
            reserveBuffers(c);
            final int[] queue = acceptQueue[l];
            queue[(acceptHead[l] + acceptCount[l]) % queue.length] = c;
            acceptCount[l]++;
            tcb.setFlag(c, F_ACCEPT_QUEUED);
            signalListener(l);
        } else {
            signal(c, EV_ESTABLISHED);
        }
        transition(c, tcb.hasFlag(c, F_FIN_QUEUED) ? TcpState.FIN_WAIT_1 : TcpState.ESTABLISHED, nowNs);
        tcb.retries(c, 0);
        tcb.quickAcks(c, QUICK_ACKS);
        tcpTimers.disarm(c, T_SENDER);
        sender.established(c, nowNs);
        if (tcb.hasFlag(c, F_KEEPALIVE)) {
            tcpTimers.arm(c, TimerKind.KEEPALIVE, nowNs + tcb.keepIdleMs(c) * 1_000_000L);
        }
        counters.established.incrementRelease();
        return true;
    }

    void leaveSynQueue(int c) {
        if (tcb.hasFlag(c, F_IN_SYN_QUEUE)) {
            tcb.clearFlag(c, F_IN_SYN_QUEUE);
            final int l = tcb.listener(c);
            if (l >= 0 && l < listenerSlots) {
                listenerSynCount[l]--;
            }
        }
    }

    /**
     * Every state change of a connection goes through here (RFC 9293 §3.3.2), with what entering the state means:
     * FIN-WAIT-2 of an orphan (closed by its owner) waits at most finWait2Timeout; TIME-WAIT keeps the row for 2 MSL
     * (without rings once the owner let go) on the TIME-WAIT list; CLOSED is {@link #terminate}'s. A trace, if any,
     * records the change.
     */
    void transition(int c, int state, long nowNs) {
        tcb.state(c, state);
        switch (state) {
            case TcpState.FIN_WAIT_2 -> {
                if (tcb.hasFlag(c, F_RELEASED)) {
                    tcpTimers.arm(c, TimerKind.STATE, nowNs + config.finWait2TimeoutNs());
                }
            }
            case TcpState.TIME_WAIT -> enterTimeWait(c, nowNs);
            default -> {
            }
        }
    }

    /** RFC 9293: TIME-WAIT for 2 MSL; the row stays (without rings once the owner let go), on the TIME-WAIT list. */
    private void enterTimeWait(int c, long nowNs) {
        tcpTimers.disarm(c, T_SENDER | T_DELAYED_ACK | T_KEEPALIVE | T_PACE);
        releaseOutOfOrder(c);
        counters.closed.incrementRelease();
        final boolean overflow = !tcb.hasFlag(c, F_TIME_WAIT_LISTED) && timeWaitCount >= config.maxTimeWait();
        if (config.mslNs() == 0 || overflow) {
            // Linux's tcp_max_tw_buckets: beyond it a connection skips TIME-WAIT (TCPTimeWaitOverflow). The ACK of
            // the peer's FIN, if owed, goes first, as tcp_fin sends it before tcp_time_wait.
            if (overflow) {
                counters.timeWaitOverflows.incrementRelease();
            }
            if (tcb.hasFlag(c, F_ACK_NOW)) {
                output.sendAck(c, nowNs);
            }
            terminate(c, TcpError.NONE, nowNs);
            return;
        }
        tcpTimers.arm(c, TimerKind.STATE, nowNs + 2 * config.mslNs());
        if (!tcb.hasFlag(c, F_TIME_WAIT_LISTED)) {
            tcb.setFlag(c, F_TIME_WAIT_LISTED);
            tcb.listPrev(c, timeWaitTail);
            tcb.listNext(c, -1);
            if (timeWaitTail >= 0) {
                tcb.listNext(timeWaitTail, c);
            } else {
                timeWaitHead = c;
            }
            timeWaitTail = c;
            timeWaitCount++;
        }
        if (tcb.hasFlag(c, F_RELEASED) || !tcb.hasFlag(c, F_OWNED) && !tcb.hasFlag(c, F_ACCEPT_QUEUED)) {
            detachRings(c);
        } else {
            signalClosed(c);
        }
    }

    void restartTimeWait(int c, long nowNs) {
        tcpTimers.arm(c, TimerKind.STATE, nowNs + 2 * config.mslNs());
    }

    private void unlinkTimeWait(int c) {
        if (!tcb.hasFlag(c, F_TIME_WAIT_LISTED)) {
            return;
        }
        final int prev = tcb.listPrev(c);
        final int next = tcb.listNext(c);
        if (prev >= 0) {
            tcb.listNext(prev, next);
        } else {
            timeWaitHead = next;
        }
        if (next >= 0) {
            tcb.listPrev(next, prev);
        } else {
            timeWaitTail = prev;
        }
        tcb.clearFlag(c, F_TIME_WAIT_LISTED);
        timeWaitCount--;
    }

    /** With every row taken, the oldest TIME-WAIT connection whose owner let go makes room (Linux tw_buckets). */
    private boolean recycleTimeWait() {
        for (int c = timeWaitHead; c >= 0; c = tcb.listNext(c)) {
            if (tcb.hasFlag(c, F_RELEASED) || !tcb.hasFlag(c, F_OWNED)) {
                counters.timeWaitRecycled.incrementRelease();
                free(c);
                return true;
            }
        }
        return false;
    }

    /**
     * The connection enters CLOSED with {@code error}. It leaves the connection table at once; the row is freed now
     * when nobody holds the handle, else when its owner closes it.
     */
    void terminate(int c, int error, long nowNs) {
        leaveSynQueue(c);
        unlinkTimeWait(c);
        tcpTimers.cancelAll(c);
        releaseOutOfOrder(c);
        removeFromTable(c);
        final int state = tcb.state(c);
        transition(c, TcpState.CLOSED, nowNs);
        if (tcb.error(c) == TcpError.NONE) {
            tcb.error(c, error);
        }
        if (error == TcpError.TIMED_OUT) {
            counters.timedOut.incrementRelease();
        }
        if (error == TcpError.NONE && state != TcpState.TIME_WAIT) {
            counters.closed.incrementRelease();
        }
        if (tcb.hasFlag(c, F_RELEASED) || !tcb.hasFlag(c, F_OWNED)) {
            free(c);
        } else {
            signalClosed(c);
        }
    }

    private void removeFromTable(int c) {
        if (tcb.hasFlag(c, F_IN_TABLE)) {
            connections.remove(ConnectionTable.key(tcb.remoteAddress(c), tcb.remotePort(c), tcb.localPort(c)));
            tcb.clearFlag(c, F_IN_TABLE);
        }
    }

    /** Frees the row and everything attached; a not yet accepted connection leaves its accept queue. */
    void free(int c) {
        leaveSynQueue(c);
        unlinkTimeWait(c);
        tcpTimers.cancelAll(c);
        releaseOutOfOrder(c);
        removeFromTable(c);
        if (tcb.hasFlag(c, F_ACCEPT_QUEUED)) {
            removeFromAcceptQueue(c);
        }
        detachRings(c);
        owners[c] = null;
        receiveHandlers[c] = null;
        heldBytes[c] = 0; // held frames outlive the connection; their release finds another generation (holdReleased)
        traces[c] = null;
        tcb.release(c);
    }

    private void removeFromAcceptQueue(int c) {
        final int l = tcb.listener(c);
        tcb.clearFlag(c, F_ACCEPT_QUEUED);
        if (!validListener(l)) {
            return;
        }
        final int[] queue = acceptQueue[l];
        final int count = acceptCount[l];
        int kept = 0;
        for (int i = 0; i < count; i++) {
            final int entry = queue[(acceptHead[l] + i) % queue.length];
            if (entry != c) {
                queue[(acceptHead[l] + kept) % queue.length] = entry;
                kept++;
            }
        }
        acceptCount[l] = kept;
    }

    void releaseOutOfOrder(int c) {
        final int block = tcb.oooBlock(c);
        if (block >= 0) {
            reassembly.release(block);
            tcb.oooBlock(c, -1);
        }
    }

    CongestionControl congestionControl(int c) {
        return congestionControls.get(tcb.ccId(c));
    }

    /** The connection's loss detection: its choice with SACK; RFC 5681's duplicate ACKs without. */
    LossDetection lossDetection(int c) {
        return lossDetections.get(tcb.hasFlag(c, F_SACK) ? tcb.lossDetectionId(c) : dupAckDetection);
    }

    /** The connection's loss recovery: its choice with SACK; RFC 6582 NewReno without. */
    LossRecovery recovery(int c) {
        return recoveries.get(tcb.hasFlag(c, F_SACK) ? tcb.recoveryId(c) : newRenoRecovery);
    }

    private boolean knownPlugPoints(TcpOptions options) {
        return (options.congestionControl() == null || congestionControls.id(options.congestionControl()) >= 0)
            && (options.lossDetection() == null || lossDetections.id(options.lossDetection()) >= 0)
            && (options.recovery() == null || recoveries.id(options.recovery()) >= 0);
    }

    /** Our SYN or SYN-ACK (again), with the SYN timer (RFC 6298 §5 applies to it too). */
    int sendSyn(int c, long nowNs) {
        final int result = output.sendSyn(c, nowNs);
        tcb.senderTimerKind(c, TcpSender.TIMER_RTO);
        tcpTimers.arm(c, TimerKind.SENDER, nowNs + rtt.rtoNs(tcb, c));
        return result;
    }

    // ------------------------------------------------------------------------------------------ queues

    /** Serve this connection's output at the next {@link #poll}. */
    void requestOutput(int c) {
        if (!outputQueued[c]) {
            outputQueued[c] = true;
            outputQueue[(outputHead + outputCount) % outputQueue.length] = c;
            outputCount++;
        }
    }

    /** An ACK must go out at the next poll. */
    void ackNow(int c) {
        tcb.setFlag(c, F_ACK_NOW);
        requestOutput(c);
    }

    /** Queues an event for the connection's owner (only for an owned, unreleased handle). */
    void signal(int c, int event) {
        if ((tcb.flags(c) & (F_OWNED | F_RELEASED)) != F_OWNED) {
            return;
        }
        tcb.events(c, tcb.events(c) | event);
        if (!eventQueued[c]) {
            eventQueued[c] = true;
            eventQueue[(eventHead + eventCount) % eventQueue.length] = c;
            eventCount++;
        }
    }

    private void signalClosed(int c) {
        if (!tcb.hasFlag(c, F_CLOSED_SIGNALLED)) {
            tcb.setFlag(c, F_CLOSED_SIGNALLED);
            signal(c, EV_CLOSED);
        }
    }

    private void signalListener(int l) {
        listenerEventPending[l] = true;
        anyListenerEvent = true;
    }

    private boolean anyListenerEvent;

    /**
     * One turn of the layer: delivers pending events, then sends for every connection that input or the events
     * made ready (ACKs, data the window now allows). Returns the number of connections served and events delivered.
     */
    public int poll(long nowNs) {
        int work = dispatchEvents() + memoryPressure.poll(nowNs);
        int count = outputCount;
        while (count-- > 0) {
            final int c = outputQueue[outputHead];
            outputHead = (outputHead + 1) % outputQueue.length;
            outputCount--;
            outputQueued[c] = false;
            if (tcb.hasFlag(c, F_ALLOCATED)) {
                sender.output(c, nowNs, false);
                work++;
            }
        }
        work += dispatchEvents();
        if (rings.flushDiscards() > 0) {
            publishMemory();
        }
        return work;
    }

    private int dispatchEvents() {
        if (dispatching) {
            return 0;
        }
        dispatching = true;
        int delivered = 0;
        try {
            if (anyListenerEvent) {
                anyListenerEvent = false;
                for (int l = 0; l < listenerSlots; l++) {
                    if (listenerEventPending[l]) {
                        listenerEventPending[l] = false;
                        if (listenerEvents[l] != null && acceptCount[l] > 0) {
                            listenerEvents[l].acceptable(l);
                            delivered++;
                        }
                    }
                }
            }
            while (eventCount > 0) {
                final int c = eventQueue[eventHead];
                eventHead = (eventHead + 1) % eventQueue.length;
                eventCount--;
                eventQueued[c] = false;
                final int events = tcb.events(c);
                tcb.events(c, 0);
                final int handle = handle(c);
                delivered += deliver(c, handle, events);
            }
        } finally {
            dispatching = false;
        }
        return delivered;
    }

    private int deliver(int c, int handle, int events) {
        int delivered = 0;
        if ((events & EV_ESTABLISHED) != 0 && slot(handle) == c) {
            owners[c].established(handle);
            delivered++;
        }
        if ((events & EV_READABLE) != 0 && slot(handle) == c) {
            owners[c].readable(handle);
            delivered++;
        }
        if ((events & EV_WRITABLE) != 0 && slot(handle) == c) {
            owners[c].writable(handle);
            delivered++;
        }
        if ((events & EV_CLOSED) != 0 && slot(handle) == c) {
            owners[c].closed(handle, tcb.error(c));
            delivered++;
        }
        return delivered;
    }

    // ------------------------------------------------------------------------------------------ input

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        input.onPacket(packet, segment, offset, length, nowNs);
    }

    @Override
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                            int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
        input.onIcmpError(type, code, nextHopMtu, originalDestination, segment, offset, length, nowNs);
    }

    /** RFC 5961 §7: at most challengeAckLimit challenge ACKs per second for the whole layer. */
    boolean challengeAckAllowed(long nowNs) {
        if (nowNs - challengeWindowNs >= 1_000_000_000L) {
            challengeWindowNs = nowNs;
            challengeCount = 0;
        }
        return ++challengeCount <= config.challengeAckLimit();
    }

    /**
     * An ACK showed forward progress: the next hop toward the peer (its gateway, or the peer on-link) is reachable
     * (RFC 4861 §7.3.1), at most once a second.
     */
    void confirmNeighbour(int c, long nowNs) {
        if (nowNs - lastConfirmNs[c] >= NEIGHBOUR_CONFIRM_NS) {
            lastConfirmNs[c] = nowNs;
            ipv4.confirmNextHop(tcb.remoteAddress(c), nowNs);
        }
    }

    /**
     * RFC 1122 §4.2.3.5 (RFC 9293 MUST-20): the same segment has now been retransmitted {@code retries} times. At R1
     * ({@link TcpConfig#retries1}, 3 by default: SHLD-10) TCP passes negative advice to IP, which probes the next
     * hop's neighbour entry again (RFC 1122 §3.3.1.4; a dead gateway or a neighbour that changed its MAC shows there),
     * and tells the owner through the soft error (SHLD-9: "between R1 and R2"): TIMED_OUT unless an ICMP error already
     * said more. Once per stall: the retry count starts again at the next ACK of new data. Linux gives the advice at
     * tcp_retries1 too (dst_negative_advice) but sets no soft error.
     */
    void retransmittedAgain(int c, int retries, long nowNs) {
        if (retries != config.retries1()) {
            return;
        }
        counters.r1Advice.incrementRelease();
        ipv4.negativeAdvice(tcb.remoteAddress(c), nowNs);
        if (tcb.softError(c) == TcpError.NONE) {
            tcb.softError(c, TcpError.TIMED_OUT);
        }
    }

    // ------------------------------------------------------------------------------------------ timers

    /**
     * The sender timer fired. While connecting it is the SYN timer (RFC 6298 §5 with Linux's retry counts: the SYN or
     * SYN-ACK goes again with the RTO doubled, until the retries run out); after that, the sender's.
     */
    void senderTimerExpired(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state != TcpState.SYN_SENT && state != TcpState.SYN_RECEIVED) {
            sender.onTimer(c, nowNs);
            return;
        }
        counters.rtoExpired.incrementRelease();
        final int retries = tcb.retries(c) + 1;
        tcb.retries(c, retries);
        final int limit = tcb.maxRetries(c) > 0 ? tcb.maxRetries(c)
            : state == TcpState.SYN_SENT || !tcb.hasFlag(c, F_PASSIVE) ? config.synRetries() : config.synAckRetries();
        if (retries > limit) {
            if (tcb.hasFlag(c, F_PASSIVE)) {
                // A half-open connection whose SYN-ACKs went unanswered (a spoofed or unroutable source).
                counters.halfOpenExpired.incrementRelease();
                free(c);
            } else {
                terminate(c, tcb.softError(c) != TcpError.NONE ? tcb.softError(c) : TcpError.TIMED_OUT, nowNs);
            }
            return;
        }
        if (!tcb.hasFlag(c, F_PASSIVE)) {
            // An active open's SYN counts toward R1 (RFC 1122 §4.2.3.5); a passive SYN-ACK does not: its peer may be
            // a spoofed source, and a flood of them would probe the gateway once per half-open connection.
            retransmittedAgain(c, retries, nowNs);
        }
        counters.txTimeoutRetransmits.incrementRelease();
        rtt.backOff(tcb, c);
        sendSyn(c, nowNs);
    }

    /** RFC 9293 §3.8.4 (RFC 1122 §4.2.3.6): probe an idle connection; give up after the configured probes. */
    void keepaliveExpired(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state != TcpState.ESTABLISHED && state != TcpState.CLOSE_WAIT && state != TcpState.FIN_WAIT_2) {
            return;
        }
        final long idleNs = tcb.keepIdleMs(c) * 1_000_000L;
        final long intervalNs = tcb.keepIntervalMs(c) * 1_000_000L;
        final int probes = tcb.probes(c);
        final long idleSince = tcb.lastReceiveNs(c);
        if (probes == 0 && nowNs - idleSince < idleNs) {
            tcpTimers.arm(c, TimerKind.KEEPALIVE, idleSince + idleNs);
            return;
        }
        if (tcb.sndUna(c) != tcb.sndMax(c)) {
            // Data is outstanding: the retransmission timer watches the connection.
            tcpTimers.arm(c, TimerKind.KEEPALIVE, nowNs + idleNs);
            return;
        }
        if (probes >= tcb.keepProbes(c)) {
            terminate(c, TcpError.TIMED_OUT, nowNs);
            return;
        }
        tcb.probes(c, probes + 1);
        output.sendKeepalive(c, nowNs);
        tcpTimers.arm(c, TimerKind.KEEPALIVE, nowNs + intervalNs);
    }

    /** End of TIME-WAIT (2 MSL), or of the FIN-WAIT-2 timeout of an orphan. */
    void stateTimeout(int c, long nowNs) {
        final int state = tcb.state(c);
        if (state == TcpState.TIME_WAIT || state == TcpState.FIN_WAIT_2) {
            terminate(c, TcpError.NONE, nowNs);
        }
    }

    // ------------------------------------------------------------------------------------------ per connection API

    /**
     * The ring the owner writes data to send into; null for an invalid handle or a connection that gave its buffers
     * back (it ended). The rings are attached on the first call (or the first data received): a connection nobody
     * asked a ring of holds none.
     */
    public ByteRing sendBuffer(int connection) {
        final int c = slot(connection);
        return c < 0 || !ensureRings(c) ? null : sendRings[c];
    }

    /** The ring the owner reads received data from; null as for {@link #sendBuffer}; attaches the rings likewise. */
    public ByteRing receiveBuffer(int connection) {
        final int c = slot(connection);
        return c < 0 || !ensureRings(c) ? null : receiveRings[c];
    }

    /** The owner wrote into the send ring: send what may go now. */
    public void sendable(int connection, long nowNs) {
        final int c = slot(connection);
        if (c >= 0 && TcpState.isSynchronized(tcb.state(c))) {
            if (inReceiveHandler) {
                // A receive handler wrote: segment input is half done, so the data leaves at this poll's output pass.
                requestOutput(c);
            } else {
                sender.output(c, nowNs, false);
            }
        }
    }

    /** The owner read from the receive ring: the receiver may advertise the larger window. */
    public void consumed(int connection, long nowNs) {
        final int c = slot(connection);
        if (c >= 0 && !inReceiveHandler) {
            receiver.consumed(c, nowNs);
        }
    }

    // ------------------------------------------------------------------------------------ zero-copy receive

    /**
     * Sets (or with null removes) the connection's zero-copy receive handler ({@link TcpReceiveHandler}); from then on
     * the handler, on the stack thread, is the receive ring's only consumer: the owner must not read the ring while a
     * handler is set. Bytes already in the ring are offered to the new handler at once. Returns 0 or
     * {@code -INVALID}. Refused from inside a handler.
     */
    public int receiveHandler(int connection, TcpReceiveHandler handler, long nowNs) {
        refuseInsideHandler("change a receive handler");
        final int c = slot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        receiveHandlers[c] = handler;
        if (handler != null) {
            deliverReceived(connection, nowNs);
        }
        return 0;
    }

    /**
     * The owner of a receive handler can take more: offers it what waits in the receive ring (bytes it left before),
     * and advertises the window that opened. Does nothing without a handler or from inside one.
     */
    public void deliverReceived(int connection, long nowNs) {
        final int c = slot(connection);
        if (c < 0 || inReceiveHandler || receiveHandlers[c] == null || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        if (drainToHandler(c) > 0) {
            receiver.consumed(c, nowNs);
        }
    }

    /**
     * Offers the receive ring's bytes to the connection's handler, oldest first, in at most two pieces (the ring's
     * end, then its start); stops when the handler takes less than offered. Returns how many it took.
     */
    int drainToHandler(int c) {
        final ByteRing ring = receiveRings[c];
        int taken = 0;
        int available;
        while ((available = ring.available()) > 0) {
            final long position = ring.consumerPosition();
            final int piece = Math.min(available, ring.contiguous(position));
            final int n = callHandler(c, ring.memory(), ring.index(position), piece);
            if (n > 0) {
                ring.consume(n);
                taken += n;
            }
            if (n < piece) {
                break;
            }
        }
        if (taken > 0) {
            counters.rxHandlerRingBytes.getAndAddRelease(taken);
        }
        return taken;
    }

    /**
     * Offers in-order segment text {@code [offset, offset + length)} of {@code data} in place (the caller made sure
     * the ring holds nothing older). Returns how many bytes the handler took; the caller copies the rest into the ring.
     */
    int offerInPlace(int c, MemorySegment data, long offset, int length) {
        holds.beginOffer(holdReturned, handle(c), data, offset, length);
        int n;
        boolean held;
        try {
            n = callHandler(c, data, offset, length);
        } finally {
            held = holds.endOffer();
        }
        if (held) {
            // A hold takes the whole offer, whatever the handler returned: its bytes are in the application's hands,
            // and keep their room in the window until they come back (holdReleased).
            n = length;
            heldBytes[c] += length;
            counters.rxHeldBytes.getAndAddRelease(length);
        }
        if (n > 0) {
            counters.rxZeroCopyBytes.getAndAddRelease(n);
        }
        return n;
    }

    /**
     * Held-frame zero-copy receive: from inside the connection's receive handler, keeps the bytes it is being offered
     * readable after the handler returns, in the link's frame, until {@link FrameHolds#release} of the hold returned
     * here (any thread, once). The hold takes the whole offer (the handler's return value no longer matters), and
     * the held bytes keep their room in the window until released, as unread bytes in the ring do: a peer cannot
     * send more than the receive buffer while the application holds it. Returns -1, changing nothing, where the
     * offer cannot be held: it is not being made in place from a frame (bytes offered from the receive ring, or
     * outside a handler), it was held already, or the link does not lend this frame (see {@link
     * dev.tern.ethernet.link.Link#lendFrame}: AF_PACKET never does, a link lends a quarter of its buffers at most);
     * the view is then valid during the call only, as always.
     */
    public long holdOffered(int connection) {
        return slot(connection) < 0 ? -1 : holds.holdOffer(holdReturned, connection);
    }

    /** Held bytes came back (stack thread, from {@link FrameHolds#drainReleased}): their window room opens. */
    private void holdReleased(int connection, int bytes, long nowNs) {
        final int c = connection & SLOT_MASK;
        if (c >= tcb.capacity() || !tcb.hasFlag(c, F_ALLOCATED) || tcb.generation(c) != connection >>> SLOT_BITS) {
            return; // the connection is gone, and its slot may serve another: nothing to give back to it
        }
        heldBytes[c] = Math.max(0, heldBytes[c] - bytes);
        receiver.consumed(c, nowNs);
    }

    /** Bytes the connection's handler holds in lent frames now ({@link #holdOffered}); 0 for an invalid handle. */
    public int heldBytes(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : heldBytes[c];
    }

    private int callHandler(int c, MemorySegment data, long offset, int length) {
        if (tcb.hasFlag(c, F_RELEASED)) {
            return 0;
        }
        inReceiveHandler = true;
        int n;
        try {
            n = receiveHandlers[c].onReceive(handle(c), data, offset, length);
        } catch (RuntimeException e) {
            // The application's bug, not the stack's: counted, and the bytes stay in the stream (the ring).
            counters.rxHandlerErrors.incrementRelease();
            n = 0;
        } finally {
            inReceiveHandler = false;
        }
        return n < 0 ? 0 : Math.min(n, length);
    }

    private void refuseInsideHandler(String what) {
        if (inReceiveHandler) {
            throw new IllegalStateException("cannot " + what + " from inside a receive handler: return first");
        }
    }

    /** Whether the connection has its rings now (they come on demand, and go with {@link #releaseIdleBuffers}). */
    public boolean ringsAttached(int connection) {
        final int c = slot(connection);
        return c >= 0 && tcb.hasFlag(c, F_RINGS);
    }

    /**
     * The owner lets go of the connection's buffers while it idles: if nothing is waiting in either ring, nothing is
     * in flight or held out of order, no received frame is held by the owner and no FIN is queued, the rings and the
     * record go back to the pool (their pages to the system beyond the pool's warm share), their sizes stop counting
     * against the memory budget, and the connection keeps only its row; the next {@link #sendBuffer},
     * {@link #receiveBuffer} or arriving data attaches rings again and counts them again (beyond the limit too, see
     * {@link #ensureRings}). A connection that never attached rings gives back its budget alone. The owner must not
     * touch a ring it got before (another thread included) after this call. Returns true when something went back,
     * false when nothing did (busy, or already idle without buffers). Cold path: meant for a server holding many idle
     * connections between requests.
     */
    public boolean releaseIdleBuffers(int connection) {
        final int c = slot(connection);
        if (c < 0 || (tcb.flags(c) & (F_BUFFERS_RESERVED | F_BUDGET_RETURNED)) != F_BUFFERS_RESERVED
            || tcb.hasFlag(c, F_FIN_QUEUED) || tcb.oooBlock(c) >= 0 || tcb.sndUna(c) != tcb.sndMax(c)
            || heldBytes[c] != 0) {
            return false;
        }
        if (tcb.hasFlag(c, F_RINGS)) {
            if (sendRings[c].available() != 0 || receiveRings[c].available() != 0) {
                return false;
            }
            releaseRings(c);
            counters.ringsReleasedIdle.incrementRelease();
        }
        tcb.setFlag(c, F_BUDGET_RETURNED);
        reservedBytes -= bufferBytes(c);
        publishMemory();
        return true;
    }

    /**
     * Half-close (RFC 9293 §3.10.4 for the sending side, shutdown(SHUT_WR)): a FIN follows the data written so far.
     * Returns 0 or {@code -INVALID}.
     */
    public int shutdownOutput(int connection, long nowNs) {
        refuseInsideHandler("shut a connection down");
        final int c = slot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        queueFin(c, nowNs);
        return 0;
    }

    private void queueFin(int c, long nowNs) {
        if (tcb.hasFlag(c, F_FIN_QUEUED)) {
            return;
        }
        final int state = tcb.state(c);
        if (state != TcpState.SYN_SENT && state != TcpState.SYN_RECEIVED && !TcpState.canSend(state)) {
            return;
        }
        // The sender sends from the rings (the FIN included): a connection that never carried data takes them now.
        if (!ensureRings(c)) {
            return;
        }
        tcb.setFlag(c, F_FIN_QUEUED);
        tcb.finPosition(c, sendRings[c].producerPosition());
        if (state == TcpState.ESTABLISHED) {
            transition(c, TcpState.FIN_WAIT_1, nowNs);
        } else if (state == TcpState.CLOSE_WAIT) {
            transition(c, TcpState.LAST_ACK, nowNs);
        } else {
            return;
        }
        sender.output(c, nowNs, false);
    }

    /**
     * Closes the connection and releases the handle (RFC 9293 §3.10.4): a graceful close sends a FIN after the
     * queued data and the protocol finishes on its own (FIN-WAIT, TIME-WAIT). Unread received data turns it into an
     * abort with a reset, as Linux does (RFC 2525 §2.17). A connection still connecting is simply dropped.
     */
    public void close(int connection, long nowNs) {
        refuseInsideHandler("close a connection");
        final int c = slot(connection);
        if (c < 0) {
            return;
        }
        final int state = tcb.state(c);
        if (tcb.hasFlag(c, F_RINGS) && receiveRings[c].available() > 0 && TcpState.isSynchronized(state)
            && state != TcpState.TIME_WAIT) {
            abort(connection, nowNs);
            return;
        }
        tcb.setFlag(c, F_RELEASED);
        tcb.events(c, 0);
        owners[c] = TcpEvents.NONE;
        receiveHandlers[c] = null;
        switch (state) {
            case TcpState.CLOSED -> free(c);
            case TcpState.SYN_SENT -> terminate(c, TcpError.NONE, nowNs);
            case TcpState.TIME_WAIT -> detachRings(c);
            case TcpState.FIN_WAIT_2 -> tcpTimers.arm(c, TimerKind.STATE, nowNs + config.finWait2TimeoutNs());
            default -> queueFin(c, nowNs);
        }
    }

    /** Aborts (RFC 9293 §3.10.5): a reset if the peer knows the connection, then CLOSED; releases the handle. */
    public void abort(int connection, long nowNs) {
        refuseInsideHandler("abort a connection");
        final int c = slot(connection);
        if (c < 0) {
            return;
        }
        final int state = tcb.state(c);
        tcb.setFlag(c, F_RELEASED);
        owners[c] = TcpEvents.NONE;
        receiveHandlers[c] = null;
        if (TcpState.isSynchronized(state) && state != TcpState.TIME_WAIT) {
            output.sendReset(c, nowNs);
            counters.aborted.incrementRelease();
        }
        terminate(c, TcpError.ABORTED, nowNs);
    }

    /** {@link TcpState} of the connection; CLOSED for an invalid handle. */
    public int state(int connection) {
        final int c = slot(connection);
        return c < 0 ? TcpState.CLOSED : tcb.state(c);
    }

    /** Why the connection ended ({@link TcpError}), NONE while it lives or after a clean close; INVALID for a bad handle. */
    public int error(int connection) {
        final int c = slot(connection);
        return c < 0 ? TcpError.INVALID : tcb.error(c);
    }

    /**
     * The last soft error of a connection that goes on (RFC 9293 MUST-47): an ICMP unreachable about a synchronized
     * connection ({@code HOST_UNREACHABLE}, {@code NET_UNREACHABLE}, {@code REFUSED}), no route for a
     * retransmission, or {@code TIMED_OUT} once a segment was retransmitted R1 times (RFC 9293 SHLD-9, {@link
     * TcpConfig#retries1}); {@code NONE} if there was none, or since new data was last acknowledged. It does not end
     * the connection; if the connection then times out, it is the error {@link #error} and {@link TcpEvents#closed}
     * report. Polled, as Linux's soft error is.
     */
    public int softError(int connection) {
        final int c = slot(connection);
        return c < 0 ? TcpError.INVALID : tcb.softError(c);
    }

    /**
     * {@link #softError} and clears it, as Linux's {@code SO_ERROR} takes {@code sk_err_soft}: the owner has been told,
     * and a later timeout reports {@code TIMED_OUT} unless another soft error comes.
     */
    public int takeSoftError(int connection) {
        final int c = slot(connection);
        if (c < 0) {
            return TcpError.INVALID;
        }
        final int error = tcb.softError(c);
        tcb.softError(c, TcpError.NONE);
        return error;
    }

    /** The peer sent its FIN: once the receive ring is empty, the stream has ended. */
    /**
     * Whether everything this end will send, its FIN included, has been acknowledged (FIN-WAIT-2 or TIME-WAIT), or the
     * connection is gone: what a close with {@code SO_LINGER} waits for (as Linux's sk_stream_wait_close).
     */
    public boolean outputAcknowledged(int connection) {
        final int c = slot(connection);
        if (c < 0) {
            return true;
        }
        final int state = tcb.state(c);
        return state == TcpState.FIN_WAIT_2 || state == TcpState.TIME_WAIT || state == TcpState.CLOSED;
    }

    public boolean receiveShutdown(int connection) {
        final int c = slot(connection);
        if (c < 0) {
            return true;
        }
        final int state = tcb.state(c);
        return state == TcpState.CLOSE_WAIT || state == TcpState.CLOSING || state == TcpState.LAST_ACK
            || state == TcpState.TIME_WAIT || state == TcpState.CLOSED;
    }

    /**
     * How many times one segment (a SYN included) is retransmitted on this connection before it gives up with
     * {@code TIMED_OUT}: RFC 9293's R2, set per connection (MUST-21); 0 goes back to the layer's
     * ({@link TcpConfig#maxRetries}, {@link TcpConfig#synRetries}). Zero-window probes count against it too. Returns 0
     * or {@code -INVALID}.
     */
    public int maxRetries(int connection, int retries) {
        final int c = slot(connection);
        if (c < 0 || retries < 0) {
            return -TcpError.INVALID;
        }
        tcb.maxRetries(c, retries);
        return 0;
    }

    /**
     * The IPv4 TOS byte (Diffserv codepoint and ECN bits, as Java's {@code IP_TOS}) of this connection's segments from
     * now on (RFC 9293 MUST-48; it may change during the connection, SHLD-21). A passive connection's SYN-ACK goes
     * with 0, as does a reset that no connection sends. Returns 0 or {@code -INVALID}.
     */
    public int trafficClass(int connection, int tos) {
        final int c = slot(connection);
        if (c < 0 || tos < 0 || tos > 255) {
            return -TcpError.INVALID;
        }
        tcb.tos(c, tos);
        return 0;
    }

    /** TCP_NODELAY: disables Nagle's algorithm (and sends what it held back). Returns 0 or {@code -INVALID}. */
    public int noDelay(int connection, boolean enabled, long nowNs) {
        final int c = slot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        if (enabled) {
            tcb.setFlag(c, F_NO_DELAY);
            sendable(connection, nowNs);
        } else {
            tcb.clearFlag(c, F_NO_DELAY);
        }
        return 0;
    }

    /** SO_KEEPALIVE with the given idle time, interval and probe count (0 keeps the current). Returns 0 or -INVALID. */
    public int keepalive(int connection, boolean enabled, long idleNs, long intervalNs, int probes, long nowNs) {
        final int c = slot(connection);
        if (c < 0 || idleNs < 0 || intervalNs < 0 || probes < 0) {
            return -TcpError.INVALID;
        }
        if (idleNs > 0) {
            tcb.keepIdleMs(c, (int) (idleNs / 1_000_000L));
        }
        if (intervalNs > 0) {
            tcb.keepIntervalMs(c, (int) (intervalNs / 1_000_000L));
        }
        if (probes > 0) {
            tcb.keepProbes(c, probes);
        }
        if (enabled) {
            tcb.setFlag(c, F_KEEPALIVE);
            tcb.probes(c, 0);
            if (TcpState.isSynchronized(tcb.state(c))) {
                tcpTimers.arm(c, TimerKind.KEEPALIVE, tcb.lastReceiveNs(c) + tcb.keepIdleMs(c) * 1_000_000L);
            }
        } else {
            tcb.clearFlag(c, F_KEEPALIVE);
            tcpTimers.disarm(c, T_KEEPALIVE);
        }
        return 0;
    }

    /** TCP_CONGESTION: switches the connection's congestion control; returns 0 or {@code -INVALID} (unknown name). */
    public int congestionControl(int connection, String name, long nowNs) {
        final int c = slot(connection);
        final int id = congestionControls.id(name);
        if (c < 0 || id < 0) {
            return -TcpError.INVALID;
        }
        if (id != tcb.ccId(c)) {
            tcb.ccId(c, id);
            if (TcpState.isSynchronized(tcb.state(c))) {
                congestionControls.get(id).init(tcb, c, tcb.sndMss(c), config.initialCwndSegments(), nowNs);
            }
        }
        return 0;
    }

    /** Switches the connection's loss detection (effective with SACK); returns 0 or {@code -INVALID}. */
    public int lossDetection(int connection, String name) {
        final int c = slot(connection);
        final int id = lossDetections.id(name);
        if (c < 0 || id < 0) {
            return -TcpError.INVALID;
        }
        tcb.lossDetectionId(c, id);
        return 0;
    }

    /** Switches the connection's loss recovery (effective with SACK, from the next recovery); 0 or {@code -INVALID}. */
    public int lossRecovery(int connection, String name) {
        final int c = slot(connection);
        final int id = recoveries.id(name);
        if (c < 0 || id < 0 || tcb.senderState(c) == TcpSender.RECOVERY) {
            return -TcpError.INVALID;
        }
        tcb.recoveryId(c, id);
        return 0;
    }

    /** Name of the connection's congestion control, or null. */
    public String congestionControlName(int connection) {
        final int c = slot(connection);
        return c < 0 ? null : congestionControl(c).name();
    }

    /** Name of the loss detection the connection uses (dupack when the peer has no SACK), or null. */
    public String lossDetectionName(int connection) {
        final int c = slot(connection);
        return c < 0 ? null : lossDetection(c).name();
    }

    /** Name of the loss recovery the connection uses (newreno when the peer has no SACK), or null. */
    public String lossRecoveryName(int connection) {
        final int c = slot(connection);
        return c < 0 ? null : recovery(c).name();
    }

    /**
     * Starts tracing the connection into {@code trace} (a record on every ACK and timeout, {@link TcpTrace}); null
     * stops. Returns 0 or {@code -INVALID}. Cold path.
     */
    public int trace(int connection, TcpTrace trace) {
        final int c = slot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        traces[c] = trace;
        return 0;
    }

    public int localAddress(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.localAddress(c);
    }

    public int localPort(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.localPort(c);
    }

    public int remoteAddress(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.remoteAddress(c);
    }

    public int remotePort(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.remotePort(c);
    }

    /** Segments retransmitted on this connection. */
    public long retransmits(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.retransmits(c);
    }

    /** Smoothed RTT in nanoseconds (0 before the first sample). */
    public long srttNs(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.srttUs(c) * 1000L;
    }

    /** The retransmission timeout now in force, backoff included, in nanoseconds. */
    public long rtoNs(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : rtt.rtoNs(tcb, c);
    }

    /** Congestion window in bytes. */
    public int cwnd(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.cwnd(c);
    }

    public int ssthresh(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.ssthresh(c);
    }

    /** The peer's window, scaled, in bytes. */
    public int sendWindow(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.sndWnd(c);
    }

    /** The window we last advertised, in bytes (what remains of it). */
    public int receiveWindow(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : Math.max(0, tcb.rcvAdv(c) - tcb.rcvNxt(c));
    }

    /** Largest payload per segment we send (before options). */
    public int mss(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.sndMss(c);
    }

    /** Bytes sent and not yet acknowledged. */
    public int inFlight(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.sndMax(c) - tcb.sndUna(c);
    }

    public long bytesAcked(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.bytesAcked(c);
    }

    public long bytesReceived(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.bytesReceived(c);
    }

    /** When a segment last arrived on the connection (any that passed the sequence checks), on the stack's clock. */
    public long lastReceiveNs(int connection) {
        final int c = slot(connection);
        return c < 0 ? 0 : tcb.lastReceiveNs(c);
    }

    /** Everything about one connection as a value (for tools: {@code tern stat}, tests); allocates. */
    public TcpInfo info(int connection) {
        final int c = slot(connection);
        if (c < 0) {
            return null;
        }
        final SentSegments sent = sentSegments[c];
        return new TcpInfo(tcb.state(c), tcb.error(c), tcb.localAddress(c), tcb.localPort(c), tcb.remoteAddress(c),
            tcb.remotePort(c), tcb.sndUna(c), tcb.sndNxt(c), tcb.rcvNxt(c), tcb.sndWnd(c),
            Math.max(0, tcb.rcvAdv(c) - tcb.rcvNxt(c)), tcb.sndMss(c), tcb.advMss(c), tcb.sndScale(c), tcb.rcvScale(c),
            tcb.hasFlag(c, F_TIMESTAMPS), tcb.hasFlag(c, F_SACK), tcb.cwnd(c), tcb.ssthresh(c), tcb.srttUs(c) * 1000L,
            tcb.rttvarUs(c) * 1000L, rtt.rtoNs(tcb, c), tcb.retransmits(c), tcb.bytesAcked(c), tcb.bytesReceived(c),
            congestionControl(c).name(), lossDetection(c).name(), recovery(c).name(),
            TcpSender.STATE_NAMES[tcb.senderState(c)], sent == null ? 0 : sent.pipe(tcb.sndMax(c) - tcb.sndUna(c)),
            sent == null ? 0 : sent.sackedBytes(), sent == null ? 0 : sent.lostBytes(), tcb.minRttUs(c) * 1000L,
            tcb.pacingRate(c));
    }

    // ------------------------------------------------------------------------------------------ layer-wide

    /** Connections in any state (TIME-WAIT included). */
    public int connectionCount() {
        return tcb.inUse();
    }

    /** Connections in TIME-WAIT. */
    public int timeWaitCount() {
        return timeWaitCount;
    }

    /** Where the layer's memory is (for the memory report and tests). */
    public TcpMemory memory() {
        return new TcpMemory(tcb.inUse(), (long) tcb.capacity() * TcpControlBlocks.ROW_BYTES, tcb.residentBytes(),
            rings.allocatedBytes(), reservedBytes, rings.inUseBytes(), connections.memoryBytes(),
            reassembly.memoryBytes(), (long) tcb.capacity() * PER_SLOT_HEAP_BYTES, rings.residentBytes());
    }

    @Override
    public void close() {
        tcb.close();
        reassembly.close();
        rings.close();
    }
}
