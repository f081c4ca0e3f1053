package dev.tern.stack;

import dev.tern.arp.ArpConfig;
import dev.tern.arp.ArpLayer;
import dev.tern.arp.NeighbourCache;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.Clock;
import dev.tern.core.time.Pollable;
import dev.tern.core.time.SystemClock;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.UdpPortOwners;
import dev.tern.igmp.IgmpConfig;
import dev.tern.igmp.IgmpLayer;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;
import dev.tern.udp.UdpConfig;
import dev.tern.udp.UdpLayer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.CancellationException;
import java.util.function.Supplier;

/**
 * One Tern stack: a {@link Link}, the protocol layers on it, their timers and counters, and the poll loop that
 * drives them.
 *
 * <pre>{@code
 * NetStack stack = NetStack.builder().link(link).address("198.18.0.2/24").gateway("198.18.0.1").build();
 * while (running) stack.doWork();          // or: StackRunner.start(stack, idleStrategy)
 * }</pre>
 *
 * <p>{@link #poll} runs to completion: receive a batch of frames and process each through the layers, deliver
 * datagrams sent to ourselves, fire due timers, then flush everything the layers transmitted with one call to the
 * link. It reads no clock itself: {@link #doWork()} reads the stack's {@link Clock} once and passes the time down,
 * so a test can drive any number of stacks on a {@code VirtualClock}.
 *
 * <p>A stack is single-threaded: owned by the thread that polls it (the application's, or a {@link StackRunner}'s).
 * A runner takes ownership for each turn of its loop and gives it back after; between turns an application thread
 * that would otherwise block on a socket can take it and poll the stack itself (as Linux's busy polling does in
 * {@code recv}, and XLIO's socket calls poll the completion queue), so data it waits for is handled on its own
 * thread without a handoff. See {@link #borrow()}.
 *
 * <p>A stack may be one shard of several that share its address and MAC ({@link StackShards}, built with
 * {@link Builder#shard}): it then drops frames its link should have given another shard, answers no ARP (shard 0
 * does, and relays what it learns), and picks active-open ports whose replies the link steers back to it.
 */
public final class NetStack implements Agent, Pollable, AutoCloseable {
    private final String name;
    private final Link link;
    private final Clock clock;
    private final CountersFile counters;
    private final Timers timers;
    private final EthernetLayer ethernet;
    private final ArpLayer arp;
    private final Ipv4Layer ipv4;
    private final IgmpLayer igmp;
    /** Null unless IPv6 is enabled; on every shard, shard 0 speaking for the addresses. */
    private final Ipv6Layer ipv6;
    private final UdpLayer udp;
    private final TcpLayer tcp;
    private final TcpSockets tcpSockets;
    private final int receiveBatch;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(4096);
    /** True while the stack's thread sleeps in {@link #awaitWork}; threads that queue work wake it. */
    private volatile boolean asleepInLink;
    private final ManyToOneConcurrentArrayQueue<UdpSocket> udpOutput;
    private final AtomicCounter pollErrors;
    private final AtomicCounter stopListenersClosed;
    private final AtomicCounter stopConnectionsFinished;
    private final AtomicCounter stopConnectionsReset;
    private final ReceiveShedding shedding;
    private static final VarHandle OWNER;
    private static final VarHandle BORROWERS;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            OWNER = lookup.findVarHandle(NetStack.class, "owner", Thread.class);
            BORROWERS = lookup.findVarHandle(NetStack.class, "borrowers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** How often a thread tries to take a runner's stack between two of its turns before it parks instead. */
    private static final int BORROW_ATTEMPTS = 256;

    /** The thread polling the stack now; null between a runner's turns, or always when no runner drives it. */
    private volatile Thread owner;
    /** A {@link StackRunner} drives the stack: ownership is taken and given back (else any thread may poll). */
    private volatile boolean runnerDriven;
    /** The runner's handler for exceptions escaping a turn; a borrower's turns report to it too. */
    private volatile ErrorHandler runnerErrors;
    /** Threads waiting to take the stack between a runner's turns: the runner stays out while there are any. */
    @SuppressWarnings("unused") // through BORROWERS
    private volatile int borrowers;
    private Pinger pinger;
    /** Set by {@link #close()}; read by other threads, whose {@link #call} would otherwise wait for a stack that is gone. */
    private volatile boolean closed;
    /** This stack's place among the shards of a sharded stack ({@link StackShards}); 0 of 1 when alone. */
    private final int shardIndex;
    private final int shardCount;
    /** The UDP ports the shards of this stack's group claimed, shared by them ({@link UdpSocket#steerPortHere}); null when alone. */
    private final UdpPortOwners udpPortOwners;
    /** ARP news from shard 0, for a shard other than 0 (null otherwise). */
    private final NeighbourRelay neighbourRelay;
    /** The last frame dropped as another shard's (see {@link #wrongShardSample()}). */
    private final WrongShardSample wrongShardSample = new WrongShardSample();

    private NetStack(Builder builder) {
        this.name = builder.name;
        this.clock = builder.clock;
        this.receiveBatch = builder.receiveBatch;
        this.counters = builder.countersInMemory
            ? CountersFile.inMemory(name, builder.maxCounters)
            : CountersFile.create(builder.countersDirectory, name, builder.maxCounters);
        this.pollErrors = counters.counter("stack.poll_errors");
        this.stopListenersClosed = counters.counter("stack.stop.listeners_closed");
        this.stopConnectionsFinished = counters.counter("stack.stop.connections_finished");
        this.stopConnectionsReset = counters.counter("stack.stop.connections_reset");
        this.shardIndex = builder.shardIndex;
        this.shardCount = builder.shardCount;
        this.udpPortOwners = shardCount == 1 ? null
            : builder.udpPortOwners != null ? builder.udpPortOwners : new UdpPortOwners();
        final AtomicCounter wrongShard = shardCount > 1 ? counters.counter("shard.rx.wrong_shard") : null;
        this.link = shardCount > 1
            ? new ShardFilterLink(builder.link, shardIndex, shardCount, counters, wrongShard, wrongShardSample,
                udpPortOwners)
            : builder.link;
        final long nowNs = clock.nanoTime();
        this.timers = new Timers(nowNs);
        this.ethernet = new EthernetLayer(link, link.macAddress(), Math.min(link.mtu(), builder.mtu), counters);
        // Only shard 0 announces the address: the others share it, and their announcements would only repeat its own.
        final ArpConfig arpConfig = shardIndex == 0 ? builder.arpConfig : withoutAnnouncements(builder.arpConfig);
        this.arp = new ArpLayer(ethernet, timers, builder.address, arpConfig, counters);
        this.ipv4 = new Ipv4Layer(ethernet, arp, timers, builder.ipv4Config, counters);
        this.igmp = new IgmpLayer(ipv4, timers, builder.igmpConfig, counters);
        // Every shard has IPv6; shard 0 speaks for the addresses (DAD, answers, MLD, router solicitations) and passes
        // on the neighbour discovery it receives (ShardFilterLink), the others learn from that (docs/DESIGN.md, "Shards").
        this.ipv6 = builder.ipv6Config.enabled()
            ? new Ipv6Layer(ethernet, timers, builder.ipv6Config, counters, shardIndex > 0) : null;
        this.udp = new UdpLayer(ipv4, ipv6, builder.udpConfig, counters);
        this.udpOutput = new ManyToOneConcurrentArrayQueue<>(builder.udpConfig.maxSockets());
        this.tcp = new TcpLayer(ipv4, ipv6, timers, builder.tcpConfig, counters);
        ethernet.holds().waker(this::wakeIfAsleep); // a release from another thread wakes a sleeping stack
        if (shardCount > 1) {
            // Ephemeral ports, TCP's and UDP's alike, are ones whose replies the link steers back to this shard.
            final dev.tern.ethernet.link.ShardPorts ports = new dev.tern.ethernet.link.ShardPorts(shardIndex, shardCount,
                builder.link.shardRule());
            tcp.shardPorts(ports);
            udp.shardPorts(ports);
        }
        this.shedding = new ReceiveShedding(link, tcp, counters);
        final SynTap synTap = new SynTap(tcp, shedding); // SYNs by source, for shedding; in front of TCP
        ipv4.register(dev.tern.ipv4.wire.IpProtocol.TCP, synTap);
        if (ipv6 != null) {
            ipv6.register(dev.tern.ipv6.wire.NextHeader.TCP, synTap);
        }
        this.tcpSockets = new TcpSockets(Math.min(builder.tcpConfig.maxConnections(), 1 << 16));
        if (shardCount > 1) {
            // A datagram reassembled here that belongs to another shard's flow goes to that shard.
            final ShardReassembledHandOver reassembled = new ShardReassembledHandOver(shardIndex, shardCount,
                link.macAddress(), (ShardFilterLink) link, counters.counter("shard.tx.reassembled_handed_over"),
                udpPortOwners);
            ipv4.register(dev.tern.ipv4.wire.IpProtocol.TCP, reassembled.guard(synTap));
            ipv4.register(dev.tern.ipv4.wire.IpProtocol.UDP, reassembled.guard(udp));
            if (ipv6 != null) {
                ipv6.register(dev.tern.ipv6.wire.NextHeader.TCP, reassembled.guard6(synTap));
                ipv6.register(dev.tern.ipv6.wire.NextHeader.UDP, reassembled.guard6(udp));
            }
        }
        if (!builder.gateways.isEmpty()) {
            final int[] gateways = new int[builder.gateways.size()];
            for (int i = 0; i < gateways.length; i++) {
                gateways[i] = builder.gateways.get(i);
                if (!builder.address.contains(gateways[i])) {
                    throw new IllegalArgumentException("gateway " + Ipv4Address.format(gateways[i])
                        + " is not on the subnet " + builder.address);
                }
            }
            ipv4.defaultGateways(gateways);
        }
        this.linkStatistics = publishLinkStatistics(nowNs);
        if (shardIndex > 0) {
            neighbourRelay = new NeighbourRelay();
            neighbourRelay.receiver(arp);
        } else {
            neighbourRelay = null;
        }
        arp.start(nowNs);
        if (ipv6 != null) {
            ipv6.start(nowNs);
        }
    }

    private static ArpConfig withoutAnnouncements(ArpConfig c) {
        return new ArpConfig(c.cacheSize(), c.reachableTimeNs(), c.retransmitNs(), c.maxRequests(), c.maxProbes(),
            c.delayFirstProbeNs(), c.pendingPerNeighbour(), c.pendingTotal(), 0, c.announceIntervalNs());
    }

    /** How often the link's own statistics are copied into the counters. */
    private static final long LINK_STATISTICS_PERIOD_NS = 1_000_000_000L;
    private final LinkStatistics linkStatistics;

    /** The link's statistics as {@code link.*} counters, refreshed each second by a timer; none for a link without. */
    private LinkStatistics publishLinkStatistics(long nowNs) {
        final String[] names = link.statisticNames();
        if (names.length == 0) {
            return null;
        }
        final LinkStatistics statistics = new LinkStatistics(link, counters.counters("link.", names));
        final int owner = timers.register((value, now) -> {
            statistics.refresh();
            timers.schedule(statistics.owner, now + LINK_STATISTICS_PERIOD_NS, 0);
        });
        statistics.owner = owner;
        timers.schedule(owner, nowNs + LINK_STATISTICS_PERIOD_NS, 0);
        return statistics;
    }

    /** The link's statistics and the counters they are copied to. */
    private static final class LinkStatistics {
        final Link link;
        final AtomicCounter[] counters;
        final long[] values;
        int owner;

        LinkStatistics(Link link, AtomicCounter[] counters) {
            this.link = link;
            this.counters = counters;
            this.values = new long[counters.length];
        }

        void refresh() {
            link.statistics(values);
            for (int i = 0; i < counters.length; i++) {
                counters[i].setRelease(values[i]);
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Runs one turn of the loop at {@code nowNs}; returns the amount of work done (0 when idle). */
    @Override
    public int poll(long nowNs) {
        int work = runCommands();
        if (neighbourRelay != null) {
            work += neighbourRelay.drain(nowNs);
        }
        // Frames the application gave back go to the link before it receives into them.
        work += ethernet.holds().drainReleased(nowNs);
        // Datagrams the application queued leave before the link is polled: a reply written since the last poll does
        // not wait behind this poll's receive (on the memory pipe, the fetch of the peer's next header line).
        final int queued = sendQueuedOutput(nowNs);
        if (queued > 0) {
            ethernet.flush();
            work += queued;
        }
        shedding.beforeReceive(nowNs);
        final int frames = ethernet.poll(nowNs, receiveBatch);
        shedding.afterReceive(frames);
        work += frames;
        work += ipv4.pollLoopback(nowNs);
        // And those that handlers queued while receiving leave in this poll, with its other output.
        work += sendQueuedOutput(nowNs);
        work += tcpSockets.drainNotices(nowNs);
        work += timers.poll(nowNs, 1024);
        work += tcp.poll(nowNs);
        ethernet.flush();
        return work;
    }

    private int runCommands() {
        int count = 0;
        Runnable command;
        while ((command = commands.poll()) != null) {
            command.run();
            count++;
        }
        return count;
    }

    private int sendQueuedOutput(long nowNs) {
        int count = 0;
        for (int n = udpOutput.size(); n > 0; n--) {
            final UdpSocket socket = udpOutput.poll();
            if (socket == null) {
                break;
            }
            socket.flushOutput(nowNs);
            count++;
        }
        return count;
    }

    /** A socket has datagrams in its send ring; any thread. */
    void requestOutput(UdpSocket socket) {
        udpOutput.offer(socket);
        wakeIfAsleep();
    }

    /**
     * For the thread that drives this stack, when it has nothing to do: sleeps until the link has frames, another
     * thread queues work for the stack (a socket's write or read, a datagram to send, a control call, a frame another
     * shard hands over: they wake it through {@link Link#wakeAwaitingThread}), or {@code timeoutMs} passes. Returns at once when work is queued
     * already. A link that cannot sleep ({@link Link#canAwaitFrames} false) returns at once. Used by
     * {@link LinkIdleStrategy}.
     */
    public boolean awaitWork(int timeoutMs) {
        asleepInLink = true;
        try {
            // The flag is up before this look: work queued from now on wakes the sleep (see wakeIfAsleep).
            if (!udpOutput.isEmpty() || tcpSockets.hasNotices() || !commands.isEmpty() || ethernet.holds().hasReleases()) {
                return true;
            }
            return link.awaitFrames(timeoutMs);
        } finally {
            asleepInLink = false;
        }
    }

    /**
     * Any thread, after queuing work for the stack: wakes its thread if it sleeps in {@link #awaitWork}; returns
     * whether it did. Costs a fence and a read while the thread runs; one system call (the link's) when it sleeps.
     */
    boolean wakeIfAsleep() {
        VarHandle.fullFence(); // the queued work before the flag's read: see awaitWork
        return asleepInLink && link.wakeAwaitingThread();
    }

    /**
     * Gives back bytes held by a receive handler ({@link TcpConnection#holdReceived}, {@link UdpSocket#holdReceived}):
     * their view must not be read after this. Any thread, once per hold; the frame goes back to the link, and a
     * connection's window reopens, at the stack's next turn. Returns false, changing nothing, for a hold released
     * already or never made.
     */
    public boolean releaseHeld(long hold) {
        return ethernet.holds().release(hold);
    }

    /**
     * True on the thread that owns this stack: its {@link StackRunner}'s, or any thread when no runner drives it
     * (the application polls it itself and promises to use one thread).
     */
    public boolean isOwnerThread() {
        final Thread current = owner;
        return current == Thread.currentThread() || current == null && !runnerDriven;
    }

    /**
     * From now on a runner drives the stack: other threads own it only while they hold it ({@link #borrow()}).
     * {@code errors} hears of every exception escaping a turn, the runner's or a borrower's (and counts it).
     */
    void runnerDriven(ErrorHandler errors) {
        runnerErrors = errors;
        runnerDriven = true;
    }

    /**
     * One turn by a thread that borrowed the stack: as a turn of the runner's loop, an exception escaping it goes
     * to the runner's error handler (and is counted) instead of into the application's socket call.
     */
    int pollLent() {
        try {
            return doWork();
        } catch (Throwable error) {
            runnerErrors.onError(error);
            return 0;
        }
    }

    /**
     * How long a thread that took a runner's stack polls it with nothing happening before it gives the stack back
     * and parks. Linux suggests 50 us for {@code net.core.busy_read}; XLIO polls 100 000 times by default before
     * it sleeps. We took 300 us from the veth benchmark (kernel to Tern, offloads on, application on a runner, on
     * two cores): the kernel's sender leaves gaps longer than 50 us (the reader parked about 3 300 times in one
     * 5 s run at 50 us), and a reader that parked in one woke up late each time: medians of the ratio to the kernel
     * 0.71 and 0.71 at 50 us, 0.83 and 0.79 at 300 us, alternating runs. How long those gaps are was not measured.
     * The price is a waiting thread that spins up to 300 us longer before it parks.
     */
    static final long BUSY_POLL_NS = 300_000;

    /** {@link #busyPollStep}: stop polling, give the stack back. */
    static final long STOP_POLLING = Long.MIN_VALUE;

    /**
     * One step of a borrower's busy poll, for a thread that holds the stack after {@link #borrow()} and waits for
     * something: one turn ({@link #pollLent()}); returns when work was last done (pass it to the next step), or
     * {@link #STOP_POLLING} once {@code deadlineNs} passed or nothing happened for {@link #BUSY_POLL_NS}.
     */
    long busyPollStep(long lastWorkNs, long deadlineNs) {
        final long now = System.nanoTime();
        if (deadlineNs - now <= 0 || now - lastWorkNs > BUSY_POLL_NS) {
            return STOP_POLLING;
        }
        if (pollLent() > 0) {
            return now;
        }
        Thread.onSpinWait();
        return lastWorkNs;
    }

    /** The runner's turn: takes the stack unless another thread holds it or waits for it; true if taken. */
    boolean tryTakeForRunner() {
        return (int) BORROWERS.getVolatile(this) == 0 && OWNER.compareAndSet(this, null, Thread.currentThread());
    }

    /**
     * A thread that would block on a socket of a runner-driven stack takes the stack between two of the runner's
     * turns, to poll it itself; true if it now owns the stack and must {@link #giveBack()} it. False at once when
     * no runner drives the stack (the caller owns it or must not poll it), and after a short wait when another
     * thread holds it (the caller parks instead).
     */
    boolean borrow() {
        if (!runnerDriven) {
            return false;
        }
        final Thread self = Thread.currentThread();
        BORROWERS.getAndAdd(this, 1);
        try {
            for (int i = 0; i < BORROW_ATTEMPTS; i++) {
                if (owner == null && OWNER.compareAndSet(this, null, self)) {
                    return true;
                }
                Thread.onSpinWait();
            }
            return false;
        } finally {
            BORROWERS.getAndAdd(this, -1);
        }
    }

    /** Gives the stack back after {@link #borrow()} or the runner's {@link #tryTakeForRunner()}. */
    void giveBack() {
        OWNER.setRelease(this, null);
    }

    /** The runner is closing the stack: waits for any borrower to give it back, and keeps it (nobody takes it after). */
    void takeForClose() {
        final Thread self = Thread.currentThread();
        while (owner != self && !OWNER.compareAndSet(this, null, self)) {
            Thread.onSpinWait();
        }
    }

    /**
     * A turn of the loop that drives this stack (a {@link StackRunner}'s, or a command's own) threw: a bug, since bad
     * input is counted and dropped, never thrown. Counted as {@code stack.poll_errors}; the loop goes on.
     */
    public void pollFailed() {
        pollErrors.incrementRelease();
    }

    /**
     * Runs {@code work} on the stack's thread and returns its result: at once when called there, else handed to
     * the running stack and waited for. For control calls (bind, connect, join, close), not for data. On a stack
     * that is closed, or closes while the call waits, it throws IllegalStateException: the work would never run.
     */
    public <T> T call(Supplier<T> work) {
        if (closed) {
            // First, even on the owner thread: a thread that last borrowed the stack from its runner still reads as
            // its owner after the runner closed it, and would run the call on a closed stack; and before borrowing,
            // for a stack closed while its runner lent it out.
            throw new IllegalStateException("the stack " + name + " is closed");
        }
        if (isOwnerThread()) {
            return work.get();
        }
        if (borrow()) {
            try {
                return work.get();
            } finally {
                giveBack();
            }
        }
        final FutureTask<T> task = new FutureTask<>(work::get);
        while (!commands.offer(task)) {
            Thread.onSpinWait();
        }
        if (closed) {
            task.cancel(false);   // offered after close() cancelled what was queued: nobody would run it
        }
        wakeIfAsleep();
        try {
            return task.get();
        } catch (CancellationException e) {
            throw new IllegalStateException("the stack " + name + " is closed");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the stack thread", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Whether {@link #close()} ran. Any thread. */
    public boolean isClosed() {
        return closed;
    }

    /** Opens a TCP connection to {@code address:port} from an ephemeral port; wait for it with {@link TcpConnection#awaitConnected}. */
    public TcpConnection connect(int address, int port) throws TernSocketException {
        return connect(address, port, 0, TcpOptions.DEFAULT);
    }

    /**
     * Opens a TCP connection with per-connection options (buffers, no-delay, keepalive, congestion control). On a
     * shard of a sharded stack, an ephemeral port ({@code localPort} 0) is one whose replies the link steers to this
     * shard ({@code ShardPorts}, as a UDP socket's).
     */
    public TcpConnection connect(int address, int port, int localPort, TcpOptions options) throws TernSocketException {
        return TcpConnection.open(this, address, port, localPort, options);
    }

    /** Opens a TCP connection to an IPv6 peer; the stack must have IPv6 ({@link Builder#ipv6}) on this shard. */
    public TcpConnection connect(Ipv6Address address, int port) throws TernSocketException {
        return connect(address, port, 0, TcpOptions.DEFAULT);
    }

    /** {@link #connect(int, int, int, TcpOptions)} to an IPv6 peer, from the source address RFC 6724 picks. */
    public TcpConnection connect(Ipv6Address address, int port, int localPort, TcpOptions options)
        throws TernSocketException {
        return TcpConnection.open6(this, address, port, localPort, options);
    }

    /** Listens for TCP connections on {@code port}. */
    public TcpListener listen(int port, int backlog) throws TernSocketException {
        return TcpListener.open(this, port, backlog, TcpOptions.DEFAULT);
    }

    public TcpListener listen(int port, int backlog, TcpOptions options) throws TernSocketException {
        return TcpListener.open(this, port, backlog, options);
    }

    /** Opens a UDP socket. */
    public UdpSocket openUdp() throws TernSocketException {
        return UdpSocket.open(this);
    }

    /** Opens an IPv6 UDP socket; the stack must have IPv6 ({@link Builder#ipv6}). */
    public UdpSocket openUdp6() throws TernSocketException {
        return UdpSocket.open6(this, false);
    }

    /**
     * Opens a dual-stack UDP socket, as the JDK's ({@code IPV6_V6ONLY} off): an IPv6 socket that, bound to the IPv6
     * wildcard, also sends and receives IPv4 and claims its port in both families. The stack must have IPv6.
     */
    public UdpSocket openUdpDualStack() throws TernSocketException {
        return UdpSocket.open6(this, true);
    }

    /** {@link Agent} entry: one turn of the loop at the clock's current time. */
    @Override
    public int doWork() {
        return poll(clock.nanoTime());
    }

    /**
     * The earliest time this stack has something to do without new input: its next timer, or the next frame the
     * link will deliver (memory wire). For simulations deciding how far to move virtual time; it scans the timers.
     */
    @Override
    public long pollAt() {
        return Math.min(Math.min(timers.earliestDeadline(), link.nextArrivalNs()), shedding.nextPollAtNs());
    }

    @Override
    public String roleName() {
        return "tern-" + name;
    }

    public String name() {
        return name;
    }

    /** This stack's index among the shards of a sharded stack ({@link StackShards}); 0 for a stack of its own. */
    public int shardIndex() {
        return shardIndex;
    }

    /** How the link steers flows among this stack's shards (meaningful when {@link #shardCount()} is above 1). */
    public dev.tern.ethernet.link.ShardRule shardRule() {
        return link.shardRule();
    }

    /** The UDP port claims of this stack's shards; null for a stack of its own. */
    UdpPortOwners udpPortOwners() {
        return udpPortOwners;
    }

    /** How many shards the stack this one belongs to has; 1 for a stack of its own. */
    public int shardCount() {
        return shardCount;
    }

    /**
     * The last frame this shard dropped as another shard's, counted in
     * {@code shard.rx.wrong_shard}: its length and first 64 bytes in hex, or "none". For diagnosing steering.
     */
    public String wrongShardSample() {
        return wrongShardSample.describe();
    }

    /** Shard 0's ARP news for this shard (null on shard 0 and on a stack of its own). */
    NeighbourRelay neighbourRelay() {
        return neighbourRelay;
    }

    public Link link() {
        return link;
    }

    public Clock clock() {
        return clock;
    }

    public long macAddress() {
        return ethernet.mac();
    }

    public InterfaceAddress address() {
        return arp.address();
    }

    public CountersFile counters() {
        return counters;
    }

    public Timers timers() {
        return timers;
    }

    public EthernetLayer ethernet() {
        return ethernet;
    }

    public ArpLayer arp() {
        return arp;
    }

    public NeighbourCache neighbours() {
        return arp.neighbours();
    }

    public Ipv4Layer ipv4() {
        return ipv4;
    }

    public IgmpLayer igmp() {
        return igmp;
    }

    /** The IPv6 layer, or null when IPv6 is not enabled ({@link Builder#ipv6}). */
    public Ipv6Layer ipv6() {
        return ipv6;
    }

    public UdpLayer udp() {
        return udp;
    }

    public TcpLayer tcp() {
        return tcp;
    }

    TcpSockets tcpSockets() {
        return tcpSockets;
    }

    /** The ICMP echo client of this stack (made on first use). */
    public Pinger pinger() {
        if (pinger == null) {
            pinger = new Pinger(this);
        }
        return pinger;
    }

    @Override
    public void onClose() {
        close();
    }

    /**
     * Begins a graceful stop, on the stack's thread: every listener stops (its SYN and accept queues reset), and every
     * connection's output ends with a FIN after the data written so far (RFC 9293 §3.10.4), counted in
     * {@code stack.stop.*}. The caller polls on until {@link #connectionsEnded()} or its linger runs out, then
     * closes the stack, which resets what is left. Returns how many connections were given a FIN.
     */
    public int shutdown() {
        final long now = clock.nanoTime();
        stopListenersClosed.getAndAddRelease(tcpSockets.closeListeners(tcp, now));
        final int finished = tcpSockets.finishConnections(tcp, now);
        stopConnectionsFinished.getAndAddRelease(finished);
        return finished;
    }

    /**
     * Whether every connection of this stack has ended both ways (CLOSED, or TIME-WAIT): those its sockets hold, and
     * those closed and let go that still deliver their data and FIN.
     */
    public boolean connectionsEnded() {
        return tcp.allEnded(false);
    }

    /**
     * Whether every connection that its socket closed, or whose output it shut down, has ended both ways: what a
     * program's end waits for briefly even without a linger, as a kernel's closed sockets outlive their process and
     * finish sending.
     */
    public boolean closedConnectionsEnded() {
        return tcp.allEnded(true);
    }

    /**
     * Tells every peer the stack is going away, on the stack's thread: listeners stop, and every connection a peer
     * knows of is reset (RFC 9293 §3.10.5), at once, so that none is left half-open writing to a host that is gone
     * (a kernel's sockets outlive their process; this stack's do not). Counted in {@code stack.stop.*}; returns how
     * many connections were reset. {@link #close()} does it first; a command calls it earlier to say how many.
     */
    public int resetConnections() {
        if (closed) {
            return 0;
        }
        final long now = clock.nanoTime();
        stopListenersClosed.getAndAddRelease(tcpSockets.closeListeners(tcp, now));
        final int reset = tcp.resetAll(now);
        stopConnectionsReset.getAndAddRelease(reset);
        ethernet.flush();
        return reset;
    }

    /**
     * Resets every connection a peer knows of ({@link #resetConnections()}), then closes the link and frees the
     * stack's memory; the counters file is removed.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        resetConnections();
        closed = true;
        // Calls still queued would never run: they are cancelled, and their callers told the stack is closed.
        Runnable command;
        while ((command = commands.poll()) != null) {
            if (command instanceof FutureTask<?> task) {
                task.cancel(false);
            }
        }
        if (linkStatistics != null) {
            linkStatistics.refresh();
        }
        udp.close();
        tcp.close();
        shedding.close();
        link.close();
        ipv4.close();
        if (ipv6 != null) {
            ipv6.close();
        }
        arp.close();
        if (pinger != null) {
            pinger.close();
        }
        counters.close();
    }

    /** How to build a stack; {@link #link} and {@link #address} are required. */
    public static final class Builder {
        private Link link;
        private InterfaceAddress address;
        private final List<Integer> gateways = new ArrayList<>();
        private Clock clock = SystemClock.INSTANCE;
        private String name = "tern";
        private boolean countersInMemory;
        private Path countersDirectory = CountersFile.defaultDirectory();
        private int maxCounters = 512;
        private ArpConfig arpConfig = ArpConfig.DEFAULT;
        private Ipv4Config ipv4Config = Ipv4Config.DEFAULT;
        private Ipv6Config ipv6Config = Ipv6Config.DISABLED;
        private IgmpConfig igmpConfig = IgmpConfig.DEFAULT;
        private UdpConfig udpConfig = UdpConfig.DEFAULT;
        private TcpConfig tcpConfig;
        private int receiveBatch = 64;
        private int mtu = 65535;
        private int shardIndex;
        private int shardCount = 1;
        private UdpPortOwners udpPortOwners;

        public Builder link(Link link) {
            this.link = link;
            return this;
        }

        /** Our address and prefix, {@code "198.18.0.2/24"}. */
        public Builder address(String cidr) {
            return address(InterfaceAddress.parse(cidr));
        }

        public Builder address(InterfaceAddress address) {
            this.address = address;
            return this;
        }

        /**
         * A default gateway, {@code "198.18.0.1"}; must be on our subnet. Called more than once, it adds gateways in
         * preference order: the first is used until it stops answering, then the next (RFC 1122 §3.3.1.5).
         */
        public Builder gateway(String gateway) {
            this.gateways.add(Ipv4Address.parse(gateway));
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        /** A name for counters and threads ({@code tern stat} shows it). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name);
            return this;
        }

        /** Publish counters in this directory (default: {@code CountersFile.defaultDirectory()}). */
        public Builder countersDirectory(Path directory) {
            this.countersDirectory = directory;
            this.countersInMemory = false;
            return this;
        }

        /** Keep counters in memory only: invisible to {@code tern stat} (tests, short-lived stacks). */
        public Builder countersInMemory() {
            this.countersInMemory = true;
            return this;
        }

        public Builder arp(ArpConfig config) {
            this.arpConfig = Objects.requireNonNull(config);
            return this;
        }

        public Builder ipv4(Ipv4Config config) {
            this.ipv4Config = Objects.requireNonNull(config);
            return this;
        }

        /** IPv6 settings; {@link Ipv6Config#DISABLED} (the default) keeps the stack IPv4 only. */
        public Builder ipv6(Ipv6Config config) {
            this.ipv6Config = Objects.requireNonNull(config);
            return this;
        }

        public Builder igmp(IgmpConfig config) {
            this.igmpConfig = Objects.requireNonNull(config);
            return this;
        }

        public Builder udp(UdpConfig config) {
            this.udpConfig = Objects.requireNonNull(config);
            return this;
        }

        public Builder tcp(TcpConfig config) {
            this.tcpConfig = Objects.requireNonNull(config);
            return this;
        }

        /** Caps the MTU below the link's (the link's own MTU is the default). */
        public Builder mtu(int mtu) {
            if (mtu < 576 || mtu > 65535) {
                throw new IllegalArgumentException("MTU must be 576..65535, got " + mtu);
            }
            this.mtu = mtu;
            return this;
        }

        /**
         * Makes the stack shard {@code index} of {@code count} sharing one address and MAC ({@link StackShards} does
         * this): it drops frames its link should have given another shard, answers no ARP it did not receive, and
         * picks active-open ports whose replies come back to it.
         */
        public Builder shard(int index, int count) {
            if (count < 1 || index < 0 || index >= count) {
                throw new IllegalArgumentException("shard " + index + " of " + count + ": need 0 <= index < count");
            }
            this.shardIndex = index;
            this.shardCount = count;
            return this;
        }

        /** The UDP port claims shared by all the shards of one stack ({@link StackShards} gives each the same). */
        Builder udpPortOwners(UdpPortOwners owners) {
            this.udpPortOwners = owners;
            return this;
        }

        /** The name given so far (shards derive theirs from it). */
        String name() {
            return name;
        }

        /** Frames taken from the link per poll. */
        public Builder receiveBatch(int frames) {
            if (frames < 1) {
                throw new IllegalArgumentException("receive batch must be at least 1, got " + frames);
            }
            this.receiveBatch = frames;
            return this;
        }

        public NetStack build() {
            if (link == null) {
                throw new IllegalStateException("NetStack needs a link");
            }
            if (address == null) {
                throw new IllegalStateException("NetStack needs an address, like 198.18.0.2/24");
            }
            if (tcpConfig == null) {
                tcpConfig = TcpConfig.defaults();
            }
            return new NetStack(this);
        }
    }
}
