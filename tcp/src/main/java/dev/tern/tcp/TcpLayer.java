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
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.ipv6.Ipv6Packet;
import dev.tern.ipv6.Ipv6ProtocolHandler;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static dev.tern.tcp.TcpControlBlocks.F_ALLOCATED;
import static dev.tern.tcp.TcpControlBlocks.F_FIN_QUEUED;
import static dev.tern.tcp.TcpControlBlocks.F_RINGS;

/**
 * TCP for one stack shard (RFC 9293): connections, listeners and the handle-based core API the socket layer wraps.
 *
 * <h2>Families</h2>
 * With an {@link Ipv6Layer} TCP runs over IPv6 too (RFC 8200 §8): {@link #connect6} opens a connection to an IPv6
 * peer, and every listener takes SYNs of both families, as a Linux socket bound to {@code [::]} without
 * {@code IPV6_V6ONLY}. Inside, an IPv6 address is its keyed 32-bit fold ({@link IsnGenerator#fold}) wherever IPv4's
 * address goes (the connection table, ISNs, cookies, Fast Open), and the row keeps both addresses whole, checked
 * on every lookup; only {@link IpOutput} and {@link TcpPath} tell the families apart.
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
 * Segments arrive through {@link #onPacket} (IPv4 or IPv6 input), timers through the shard's {@link Timers}. Connections that
 * need to send after input are queued, and so are events; {@link #poll} delivers the events (so an application's
 * reply can carry the ACK), then serves the output queue, one pass per connection, however many segments arrived.
 * The stack calls it once per turn after receiving and firing timers, and before flushing the link:
 * <pre>{@code  ethernet.poll(now) -> ipv4.pollLoopback(now) -> timers.poll(now) -> tcp.poll(now) -> ethernet.flush()}</pre>
 *
 * <h2>Rooms</h2>
 * This class is the shard's API and the wiring: each concern is a class of its own with its own state, handed its
 * collaborators in its constructor, and none of them holds this class (docs/TCP.md "Rooms"; {@code
 * TcpArchitectureTest}). An in-order segment enters here twice: at {@link #onPacket} and at {@link #poll}.
 * Owned by the shard thread; not thread-safe. Nothing here allocates per segment.
 */
public final class TcpLayer implements IpProtocolHandler, Ipv6ProtocolHandler, AutoCloseable {
    /** The congestion controls every layer knows by name (more may be registered, {@link #registerCongestionControl}). */
    public static final List<String> BUILT_IN_CONGESTION_CONTROLS = List.of(
        CubicCongestionControl.NAME, NewRenoCongestionControl.NAME, NoCongestionControl.NAME, DctcpCongestionControl.NAME,
        BbrCongestionControl.NAME);

    private final ConnectionSettings settings;
    private final TcpControlBlocks tcb;
    private final ConnectionTable connections;
    private final ReassemblyQueue reassembly;
    private final RttEstimator rtt;
    private final PlugPointRegistry plugPoints;
    private final TcpListeners listeners;
    private final ConnectionBuffers buffers;
    private final ReceiveHandlers handlers;
    private final OutputQueue outputQueue;
    private final EventQueue events;
    private final TcpSender sender;
    private final TcpReceiver receiver;
    private final ConnectionLifecycle lifecycle;
    private final TimeWaitList timeWait;
    private final TcpInput input;
    private final TcpTimeouts timeouts;
    private final TcpMemoryPressure memoryPressure;
    private final TcpSocketOptions socketOptions;
    private final IsnGenerator isn;
    private final FastOpen fastOpen;
    private final SendCompletions completions;
    private boolean dispatching;

    public TcpLayer(Ipv4Layer ipv4, Timers wheel, TcpConfig config, CountersFile countersFile) {
        this(ipv4, null, wheel, config, countersFile);
    }

    /** TCP over IPv4 and, when {@code ipv6} is not null, IPv6. */
    public TcpLayer(Ipv4Layer ipv4, Ipv6Layer ipv6, Timers wheel, TcpConfig config, CountersFile countersFile) {
        final TcpCounters counters = new TcpCounters(countersFile);
        final int capacity = config.maxConnections();
        this.settings = new ConnectionSettings(config, capacity);
        this.tcb = new TcpControlBlocks(capacity);
        this.connections = new ConnectionTable(capacity, config.isnKey0() ^ Long.rotateLeft(config.isnKey1(), 17));
        this.reassembly = new ReassemblyQueue(Math.min(config.outOfOrderBlocks(), capacity), config.outOfOrderRanges());
        final IsnGenerator isn = new IsnGenerator(config.isnKey0(), config.isnKey1(), config.fixedIsn());
        this.isn = isn;
        final SynCookies cookies = new SynCookies(config.isnKey0(), config.isnKey1());
        this.rtt = new RttEstimator(config);
        this.plugPoints = new PlugPointRegistry(tcb, settings);
        final TcpPath path = new TcpPath(ipv4, ipv6, tcb, counters, settings);
        final IpOutput ip = new IpOutput(ipv4, ipv6, tcb);
        this.memoryPressure = new TcpMemoryPressure(tcb, counters, config);
        final TcpTimers timers = new TcpTimers(tcb, wheel, wheel.register(this::timerFired));
        this.outputQueue = new OutputQueue(tcb);
        this.events = new EventQueue(tcb);
        this.listeners = new TcpListeners(tcb, counters, settings);
        this.buffers = new ConnectionBuffers(tcb, counters, config, memoryPressure);
        this.handlers = new ReceiveHandlers(tcb, counters, buffers, ipv4.ethernet().holds(), this::holdReleased);
        final Ecn ecn = new Ecn(tcb, counters, settings, plugPoints);
        final TcpOutput output = new TcpOutput(tcb, ip, path, counters, buffers, outputQueue, ecn, settings);
        this.completions = new SendCompletions(tcb, buffers, events, counters);
        this.sender = new TcpSender(tcb, output, ip, counters, rtt, settings, timers, buffers, outputQueue, events,
            plugPoints, path, completions, ecn);
        this.timeWait = new TimeWaitList(tcb);
        this.fastOpen = new FastOpen(tcb, listeners, buffers, output, counters, settings, completions);
        this.lifecycle = new ConnectionLifecycle(ipv4, ipv6, tcb, settings, counters, connections, reassembly, isn, rtt,
            plugPoints, listeners, buffers, handlers, events, timers, output, sender, path, timeWait, fastOpen,
            completions);
        this.receiver = new TcpReceiver(tcb, output, reassembly, counters, settings, timers, buffers, handlers,
            outputQueue, events, memoryPressure, lifecycle, sender);
        output.receiver(receiver);
        this.input = new TcpInput(ipv4, tcb, output, sender, receiver, rtt, counters, settings, connections, listeners,
            lifecycle, cookies, isn, fastOpen, buffers, path, outputQueue, ecn);
        this.timeouts = new TcpTimeouts(tcb, timers, receiver, sender, lifecycle, output, rtt, path, counters, settings);
        this.socketOptions = new TcpSocketOptions(tcb, buffers, settings, listeners, sender, handlers, outputQueue);
        ipv4.register(IpProtocol.TCP, this);
        if (ipv6 != null) {
            ipv6.register(NextHeader.TCP, this);
        }
    }

    /** The wheel's callback: what came due is {@link TcpTimeouts}' business. */
    private void timerFired(long payload, long nowNs) {
        timeouts.onTimer(payload, nowNs);
    }

    /** Held bytes came back (stack thread, from {@link FrameHolds#drainReleased}): their window room opens. */
    private void holdReleased(int connection, int bytes, long nowNs) {
        final int c = handlers.returned(connection, bytes);
        if (c >= 0) {
            receiver.consumed(c, nowNs);
        }
    }

    /** Makes a congestion control selectable by its name (cold path). A later one with the same name replaces it. */
    public void registerCongestionControl(CongestionControl congestionControl) {
        plugPoints.registerCongestionControl(congestionControl);
    }

    /** Makes a loss detection selectable by its name (cold path). A later one with the same name replaces it. */
    public void registerLossDetection(LossDetection lossDetection) {
        plugPoints.registerLossDetection(lossDetection);
    }

    /** Makes a loss recovery selectable by its name (cold path). A later one with the same name replaces it. */
    public void registerLossRecovery(LossRecovery recovery) {
        plugPoints.registerLossRecovery(recovery);
    }

    /** Names of the congestion controls connections may choose, in registration order. */
    public List<String> congestionControlNames() {
        return plugPoints.congestionControlNames();
    }

    /** Names of the loss detections connections may choose. */
    public List<String> lossDetectionNames() {
        return plugPoints.lossDetectionNames();
    }

    /** Names of the loss recoveries connections may choose. */
    public List<String> lossRecoveryNames() {
        return plugPoints.lossRecoveryNames();
    }

    /** The settings in effect now: what a connection or listener opened now gets ({@link #reconfigure}). */
    public TcpConfig config() {
        return settings.current();
    }

    /** New settings for connections opened from now on; open ones keep theirs ({@link ConnectionSettings}). */
    public void reconfigure(TcpConfig next) {
        settings.reconfigure(next);
    }

    /** TCP_USER_TIMEOUT, TCP_NOTSENT_LOWAT and TCP_MAXSEG of open connections. */
    public TcpSocketOptions socketOptions() {
        return socketOptions;
    }

    /** Send completions (SO_ZEROCOPY, MSG_ZEROCOPY): which tracked sends the peer acknowledged. */
    public SendCompletions sendCompletions() {
        return completions;
    }

    /** TCP Fast Open (RFC 7413): listeners' queues and keys, what a connection's SYN carried. */
    public FastOpen fastOpen() {
        return fastOpen;
    }

    // ------------------------------------------------------------------------------------------- opening

    /** {@link #listen(int, int, TcpOptions, TcpEvents)} with default options. */
    public int listen(int localPort, int backlog, TcpEvents events) {
        return listen(localPort, backlog, TcpOptions.DEFAULT, events);
    }

    /**
     * Listens on {@code localPort} (RFC 9293 §3.10.1, passive OPEN); accepted connections get {@code options} and
     * report to {@code events}. Returns a listener handle, or {@code -ADDRESS_IN_USE} / {@code -INVALID}. Cold path.
     */
    public int listen(int localPort, int backlog, TcpOptions options, TcpEvents events) {
        if (localPort < 1 || localPort > 65535 || backlog < 0 || events == null || options == null
            || !plugPoints.knows(options)) {
            return -TcpError.INVALID;
        }
        return fastOpen.opened(listeners.open(localPort, backlog, options, events), backlog);
    }

    /** The oldest established connection of the listener's accept queue (data may wait in it), or -1 when none. */
    public int accept(int listener) {
        final int c = listeners.take(listener);
        if (c < 0) {
            return -1;
        }
        lifecycle.accepted(c);
        return tcb.handle(c);
    }

    /** Connections waiting in the accept queue. */
    public int acceptable(int listener) {
        return listeners.acceptable(listener);
    }

    /** Half-open connections (SYN-RECEIVED, not yet in the accept queue) of the listener; 0 for a bad handle. */
    public int halfOpen(int listener) {
        return listeners.halfOpen(listener);
    }

    /** Stops listening; half-open and not yet accepted connections are reset (as Linux does). */
    public void closeListener(int listener, long nowNs) {
        lifecycle.closeListener(listener, nowNs);
    }

    /** Once per poll, before the frames: ring half full (segments for no one dropped; SYNs too, if dropSyns). */
    public void receivePressure(boolean underPressure, boolean dropSyns) {
        input.receivePressure(underPressure, dropSyns);
    }

    /**
     * Opens a connection (RFC 9293 §3.10.1, active OPEN) from {@code localPort} (0: an ephemeral port, RFC 6056) to
     * {@code remoteAddress:remotePort}; the SYN leaves at once (with a Fast Open cookie, {@link TcpOptions#fastOpen},
     * at the first {@link #sendable}). Returns a handle, or a negated {@link TcpError}: {@code INVALID}, {@code
     * ADDRESS_IN_USE}, {@code ADDRESS_NOT_AVAILABLE}, {@code TOO_MANY_CONNECTIONS}, {@code NET_UNREACHABLE} (a
     * broadcast or multicast address too, as Linux); {@link TcpEvents} reports the outcome.
     */
    public int connect(int remoteAddress, int remotePort, int localPort, TcpOptions options, TcpEvents events,
                       long nowNs) {
        if (remotePort < 1 || remotePort > 65535 || localPort < 0 || localPort > 65535 || events == null
            || options == null || remoteAddress == 0) {
            return -TcpError.INVALID;
        }
        final int c = lifecycle.connect(remoteAddress, remotePort, localPort, options, events, nowNs);
        return c < 0 ? c : tcb.handle(c);
    }

    /**
     * {@link #connect} to an IPv6 peer ({@code remoteHigh}, {@code remoteLow}), from the source address RFC 6724 picks;
     * {@code ADDRESS_NOT_AVAILABLE} when the stack has no IPv6 or no usable address yet (duplicate address detection).
     */
    public int connect6(long remoteHigh, long remoteLow, int remotePort, int localPort, TcpOptions options,
                        TcpEvents events, long nowNs) {
        if (remotePort < 1 || remotePort > 65535 || localPort < 0 || localPort > 65535 || events == null
            || options == null || (remoteHigh == 0 && remoteLow == 0)) {
            return -TcpError.INVALID;
        }
        final int c = lifecycle.connect6(remoteHigh, remoteLow, remotePort, localPort, options, events, nowNs);
        return c < 0 ? c : tcb.handle(c);
    }

    /**
     * The keyed 32-bit fold this layer gives an IPv6 address of ours (where an IPv4 address stands: Fast Open's
     * cookies, the ISN); for tools that must compute what the layer computes, such as a Fast Open cookie.
     */
    public int addressFold(long high, long low) {
        return isn.fold(high, low);
    }

    /** The fold of a peer's IPv6 address talking to one of ours ({@link #addressFold}'s counterpart, the key's). */
    public int remoteAddressFold(long remoteHigh, long remoteLow, long localHigh, long localLow) {
        return isn.remoteFold(remoteHigh, remoteLow, localHigh, localLow);
    }

    /** On a shard of a sharded stack, an active open's ephemeral port is one of {@code ports}. Cold path. */
    public void shardPorts(ShardPorts ports) {
        lifecycle.shardPorts(ports);
    }

    // ------------------------------------------------------------------------------------------ the poll loop

    /**
     * One turn of the layer: delivers pending events, then sends for every connection that input or the events
     * made ready (ACKs, data the window now allows). Returns the number of connections served and events delivered.
     */
    public int poll(long nowNs) {
        int work = dispatchEvents();
        if (memoryPressure.takeReopen()) {
            work += receiver.reopenClampedWindows();
        } else if (memoryPressure.underPressure()) {
            buffers.reclaimIdleReceiveRings(nowNs);
        }
        int count = outputQueue.size();
        while (count-- > 0) {
            final int c = outputQueue.take();
            if (tcb.hasFlag(c, F_ALLOCATED)) {
                sender.output(c, nowNs, false);
                work++;
            }
        }
        work += dispatchEvents();
        buffers.flushDiscards();
        return work;
    }

    /** Listener events, then connection events; not again from inside an owner's callback. */
    private int dispatchEvents() {
        if (dispatching) {
            return 0;
        }
        dispatching = true;
        try {
            return listeners.deliverEvents() + events.deliver();
        } finally {
            dispatching = false;
        }
    }

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        input.onPacket(packet, segment, offset, length, nowNs);
    }

    @Override
    public void onPacket(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        input.onPacket(packet, segment, offset, length, nowNs);
    }

    @Override
    public void onIcmpError(int type, int code, long sourceHigh, long sourceLow, long destinationHigh,
                            long destinationLow, MemorySegment segment, long offset, int length, long nowNs) {
        input.onIcmpError6(type, code, sourceHigh, sourceLow, destinationHigh, destinationLow, segment, offset, length,
            nowNs);
    }

    @Override
    public void onIcmpError(int type, int code, int nextHopMtu, int reporter, int originalSource,
                            int originalDestination, MemorySegment segment, long offset, int length, long nowNs) {
        input.onIcmpError(type, code, nextHopMtu, originalDestination, segment, offset, length, nowNs);
    }

    // ------------------------------------------------------------------------------------------ per connection API

    /**
     * The ring the owner writes data to send into; null for an invalid handle or a connection that ended. Rings attach
     * on the first call (or the first data received): a connection nobody asked a ring of holds none.
     */
    public ByteRing sendBuffer(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || !buffers.ensureRings(c) ? null : buffers.sendRing(c);
    }

    /** The ring the owner reads received data from; null as for {@link #sendBuffer}; attaches the rings likewise. */
    public ByteRing receiveBuffer(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || !buffers.ensureRings(c) ? null : buffers.receiveRing(c);
    }

    /** The owner wrote into the send ring: send what may go now (a Fast Open connect's held SYN, with the data). */
    public void sendable(int connection, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        if (c >= 0 && !lifecycle.sendDeferredSyn(c, nowNs) && TcpState.isSynchronized(tcb.state(c))) {
            tcb.clearSenderFlag(c, SenderState.S_UNPUSHED);
            if (handlers.inHandler()) {
                // A receive handler wrote: segment input is half done, so the data leaves at this poll's output pass.
                outputQueue.request(c);
            } else {
                sender.output(c, nowNs, false);
            }
        }
    }

    /** The owner read from the receive ring: the receiver may advertise the larger window. */
    public void consumed(int connection, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        if (c >= 0 && !handlers.inHandler()) {
            receiver.consumed(c, nowNs);
        }
    }

    // ------------------------------------------------------------------------------------ zero-copy receive

    /**
     * Sets (or with null removes) the connection's zero-copy receive handler ({@link TcpReceiveHandler}): from then on
     * it is, on the stack thread, the receive ring's only consumer (the owner must not read the ring). Bytes already
     * in the ring are offered to it at once. Returns 0 or {@code -INVALID}; refused inside a handler.
     */
    public int receiveHandler(int connection, TcpReceiveHandler handler, long nowNs) {
        handlers.refuseInside("change a receive handler");
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        handlers.handler(c, handler);
        if (handler != null) {
            deliverReceived(connection, nowNs);
        }
        return 0;
    }

    /** A receive handler can take more: offers it what waits in the ring and advertises the window that opened. */
    public void deliverReceived(int connection, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || handlers.inHandler() || !handlers.has(c) || !tcb.hasFlag(c, F_RINGS)) {
            return;
        }
        if (handlers.drain(c) > 0) {
            receiver.consumed(c, nowNs);
        }
    }

    /**
     * Held-frame zero-copy receive: from inside the connection's receive handler, keeps the bytes it is being offered
     * readable in the link's frame until {@link FrameHolds#release} of the hold returned here (any thread, once). The
     * hold takes the whole offer, and the bytes keep their room in the window until released. Returns -1, changing
     * nothing, where the offer cannot be held: not made in place from a frame, held already, or a frame the link does
     * not lend ({@link dev.tern.ethernet.link.Link#lendFrame}); the view is then valid during the call only.
     */
    public long holdOffered(int connection) {
        return tcb.ownedSlot(connection) < 0 ? -1 : handlers.holdOffered(connection);
    }

    /** Bytes the connection's handler holds in lent frames now ({@link #holdOffered}); 0 for an invalid handle. */
    public int heldBytes(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : handlers.held(c);
    }

    /** Whether the connection has its rings now (they come on demand, and go with {@link #releaseIdleBuffers}). */
    public boolean ringsAttached(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && tcb.hasFlag(c, F_RINGS);
    }

    /**
     * The owner lets go of the connection's buffers while it idles: if nothing waits in either ring, is in flight,
     * held out of order or in lent frames, and no FIN is queued, the rings and record go back to the pool and leave
     * the memory budget; {@link #sendBuffer}, {@link #receiveBuffer} or arriving data attach them again, and a ring
     * got before must not be touched after. Returns whether something went back. Cold path: idle servers.
     */
    public boolean releaseIdleBuffers(int connection) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || tcb.hasFlag(c, F_FIN_QUEUED) || tcb.oooBlock(c) >= 0 || tcb.sndUna(c) != tcb.sndMax(c)
            || handlers.held(c) != 0) {
            return false;
        }
        return buffers.releaseIdle(c);
    }

    /**
     * Half-close (RFC 9293 §3.10.4 for the sending side, shutdown(SHUT_WR)): a FIN follows the data written so far.
     * Returns 0 or {@code -INVALID}.
     */
    public int shutdownOutput(int connection, long nowNs) {
        handlers.refuseInside("shut a connection down");
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        lifecycle.queueFin(c, nowNs);
        return 0;
    }

    /**
     * Closes the connection and releases the handle (RFC 9293 §3.10.4): a graceful close sends a FIN after the
     * queued data and the protocol finishes on its own (FIN-WAIT, TIME-WAIT). Unread received data turns it into an
     * abort with a reset, as Linux does (RFC 2525 §2.17). A connection still connecting is simply dropped.
     */
    public void close(int connection, long nowNs) {
        handlers.refuseInside("close a connection");
        final int c = tcb.ownedSlot(connection);
        if (c >= 0) {
            lifecycle.close(c, nowNs);
        }
    }

    /** Aborts (RFC 9293 §3.10.5): a reset if the peer knows the connection, then CLOSED; releases the handle. */
    public void abort(int connection, long nowNs) {
        handlers.refuseInside("abort a connection");
        final int c = tcb.ownedSlot(connection);
        if (c >= 0) {
            lifecycle.abort(c, nowNs);
        }
    }

    /** The stack is closing: resets every connection a peer knows of (RFC 9293 §3.10.5); returns how many. */
    public int resetAll(long nowNs) {
        return lifecycle.resetAll(nowNs);
    }

    /**
     * Whether every connection (with {@code releasedOnly}, every one closed and let go, or whose output its owner shut
     * down) is CLOSED or in TIME-WAIT.
     */
    public boolean allEnded(boolean releasedOnly) {
        return lifecycle.allEnded(releasedOnly);
    }

    /** {@link TcpState} of the connection; CLOSED for an invalid handle. */
    public int state(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? TcpState.CLOSED : tcb.state(c);
    }

    /** Why the connection ended ({@link TcpError}): NONE while it lives or closed cleanly; INVALID for a bad handle. */
    public int error(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? TcpError.INVALID : tcb.error(c);
    }

    /**
     * The last soft error of a connection that goes on (RFC 9293 MUST-47): an ICMP unreachable about a synchronized
     * connection ({@code HOST_UNREACHABLE}, {@code NET_UNREACHABLE}, {@code REFUSED}), no route for a retransmission,
     * or {@code TIMED_OUT} after R1 retransmissions of a segment (SHLD-9, {@link TcpConfig#retries1}); {@code NONE} if
     * none since new data was last acknowledged. It does not end the connection; if it then times out, this is the
     * error {@link #error} and {@link TcpEvents#closed} report. Polled, as Linux's soft error is.
     */
    public int softError(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? TcpError.INVALID : tcb.softError(c);
    }

    /**
     * {@link #softError} and clears it, as Linux's {@code SO_ERROR} takes {@code sk_err_soft}: the owner has been told,
     * and a later timeout reports {@code TIMED_OUT} unless another soft error comes.
     */
    public int takeSoftError(int connection) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return TcpError.INVALID;
        }
        final int error = tcb.softError(c);
        tcb.softError(c, TcpError.NONE);
        return error;
    }

    /**
     * Whether everything this end will send, its FIN included, has been acknowledged (FIN-WAIT-2 or TIME-WAIT), or the
     * connection is gone: what a close with {@code SO_LINGER} waits for (as Linux's sk_stream_wait_close).
     */
    public boolean outputAcknowledged(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || TcpState.outputAcknowledged(tcb.state(c));
    }

    /** The peer sent its FIN (or the connection is gone): once the receive ring is empty, the stream has ended. */
    public boolean receiveShutdown(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || TcpState.finReceived(tcb.state(c));
    }

    /**
     * How many times one segment (a SYN included) is retransmitted on this connection before it gives up with {@code
     * TIMED_OUT}: RFC 9293's R2, per connection (MUST-21); 0 goes back to the layer's ({@link TcpConfig#maxRetries},
     * {@link TcpConfig#synRetries}). Zero-window probes count against it too. Returns 0 or {@code -INVALID}.
     */
    public int maxRetries(int connection, int retries) {
        final int c = tcb.ownedSlot(connection);
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
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || tos < 0 || tos > 255) {
            return -TcpError.INVALID;
        }
        tcb.tos(c, tos);
        return 0;
    }

    /** TCP_NODELAY: disables Nagle's algorithm (and sends what it held back). Returns 0 or {@code -INVALID}. */
    public int noDelay(int connection, boolean enabled, long nowNs) {
        return socketOptions.noDelay(connection, enabled, nowNs);
    }

    /** SO_KEEPALIVE with the given idle time, interval and probe count (0 keeps the current). Returns 0 or -INVALID. */
    public int keepalive(int connection, boolean enabled, long idleNs, long intervalNs, int probes, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : timeouts.keepalive(c, enabled, idleNs, intervalNs, probes);
    }

    /** TCP_CONGESTION: switches the connection's congestion control; returns 0 or {@code -INVALID} (unknown name). */
    public int congestionControl(int connection, String name, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : plugPoints.switchCongestionControl(c, name, nowNs);
    }

    /** Switches the connection's loss detection (effective with SACK); returns 0 or {@code -INVALID}. */
    public int lossDetection(int connection, String name) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : plugPoints.switchLossDetection(c, name);
    }

    /** Switches the connection's loss recovery (effective with SACK, from the next recovery); 0 or {@code -INVALID}. */
    public int lossRecovery(int connection, String name) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || tcb.senderState(c) == SenderState.RECOVERY ? -TcpError.INVALID
            : plugPoints.switchLossRecovery(c, name);
    }

    /** Name of the connection's congestion control, or null. */
    public String congestionControlName(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? null : plugPoints.congestionControl(c).name();
    }

    /** Name of the loss detection the connection uses (dupack when the peer has no SACK), or null. */
    public String lossDetectionName(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? null : plugPoints.lossDetection(c).name();
    }

    /** Name of the loss recovery the connection uses (newreno when the peer has no SACK), or null. */
    public String lossRecoveryName(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? null : plugPoints.recovery(c).name();
    }

    /** Traces the connection into {@code trace} (each ACK and timeout, {@link TcpTrace}); null stops. Cold path. */
    public int trace(int connection, TcpTrace trace) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? -TcpError.INVALID : sender.trace(c, trace);
    }

    public int localAddress(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.localAddress(c);
    }

    public int localPort(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.localPort(c);
    }

    public int remoteAddress(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.remoteAddress(c);
    }

    public int remotePort(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.remotePort(c);
    }

    /**
     * Whether the connection runs over IPv6; then {@link #localAddress} and {@link #remoteAddress} are folds, and its
     * addresses are {@link #localAddressHigh}/{@code Low} and {@link #remoteAddressHigh}/{@code Low}.
     */
    public boolean ipv6(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && tcb.ipv6(c);
    }

    public long localAddressHigh(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.localAddressHigh(c);
    }

    public long localAddressLow(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.localAddressLow(c);
    }

    public long remoteAddressHigh(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.remoteAddressHigh(c);
    }

    public long remoteAddressLow(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.remoteAddressLow(c);
    }

    /** Segments retransmitted on this connection. */
    public long retransmits(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.retransmits(c);
    }

    /** The retransmission timeout now in force, backoff included, in nanoseconds. */
    public long rtoNs(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : rtt.rtoNs(tcb, c);
    }

    /** Congestion window in bytes. */
    public int cwnd(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.cwnd(c);
    }

    public int ssthresh(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.ssthresh(c);
    }

    /** The peer's window, scaled, in bytes. */
    public int sendWindow(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.sndWnd(c);
    }

    /** The window we last advertised, in bytes (what remains of it). */
    public int receiveWindow(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : Math.max(0, tcb.rcvAdv(c) - tcb.rcvNxt(c));
    }

    /** Largest payload per segment we send (before options). */
    public int mss(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.sndMss(c);
    }

    /** Bytes sent and not yet acknowledged. */
    public int inFlight(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.sndMax(c) - tcb.sndUna(c);
    }

    public long bytesReceived(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.bytesReceived(c);
    }

    /** When a segment last arrived on the connection (any that passed the sequence checks), on the stack's clock. */
    public long lastReceiveNs(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : tcb.lastReceiveNs(c);
    }

    /**
     * Everything about one connection as a value (for tools: {@code tern stat}, tests); allocates. The chrono times'
     * running spell counts up to the connection's last segment sent or received.
     */
    public TcpInfo info(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? null : info(connection, Math.max(tcb.lastSendNs(c), tcb.lastReceiveNs(c)));
    }

    /** {@link #info(int)} with the chrono times' running spell counted up to {@code nowNs}, as Linux's TCP_INFO. */
    public TcpInfo info(int connection, long nowNs) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? null : TcpInfo.of(tcb, c, rtt, plugPoints, buffers, sender.chrono(), nowNs);
    }

    // ------------------------------------------------------------------------------------------ layer-wide

    /** Connections in any state (TIME-WAIT included). */
    public int connectionCount() {
        return tcb.inUse();
    }

    /** Connections in TIME-WAIT. */
    public int timeWaitCount() {
        return timeWait.count();
    }

    /** Where the layer's memory is (for the memory report and tests). */
    public TcpMemory memory() {
        return TcpMemory.of(tcb, connections, reassembly, buffers.rings(), buffers.reservedBytes());
    }

    @Override
    public void close() {
        tcb.close();
        reassembly.close();
        buffers.close();
    }
}
