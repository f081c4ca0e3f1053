package dev.tern.nio;

import dev.tern.core.net.InterfaceAddress;
import dev.tern.stack.NetStack;
import dev.tern.stack.StackRunner;
import dev.tern.stack.StackShards;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.io.IOException;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.nio.channels.Channel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Properties;

/**
 * A {@link SelectorProvider} whose channels run on a Tern stack: {@link SocketChannel}, {@link ServerSocketChannel},
 * {@link DatagramChannel} and {@link java.nio.channels.Selector} with the JDK's semantics, so that code written for
 * NIO (Netty's NIO transport among it) runs on Tern unchanged. What Tern does not claim goes to the JDK's own
 * provider by {@link Rules} (loopback, UNIX-domain sockets, pipes, destinations outside Tern's subnet, ...), and one
 * selector serves both kinds of channel.
 *
 * <p>Two ways to use it:
 * <pre>{@code
 * // In code: a provider over a stack you built (it starts a StackRunner and owns the stack from now on).
 * TernSelectorProvider provider = TernSelectorProvider.open(stack);
 * SocketChannel channel = provider.openSocketChannel();
 *
 * // System-wide, for programs that call SocketChannel.open() (what `tern exec` sets up):
 * //   -Djava.nio.channels.spi.SelectorProvider=dev.tern.nio.TernSelectorProvider -Dtern.link=afpacket:eth1 ...
 * }</pre>
 * The system-wide provider reads its stack's description from system properties ({@link TernNetwork}) and opens it
 * on the first channel that goes to Tern.
 *
 * <p>Thread-safe. Channels may be used from any thread, as the JDK's; a channel's reads and writes each take its
 * own lock, and data moves between the application's buffers and the stack's off-heap rings without allocation.
 */
public final class TernSelectorProvider extends SelectorProvider implements AutoCloseable {
    private final TernNetwork network;
    private final NetStack fixedStack;
    /** The sharded stack of a provider over one ({@link #over(StackShards, Rules)}); null otherwise. */
    private final StackShards fixedSharded;
    private final StackRunner ownedRunner;
    private final Rules rules;
    private volatile NioCounters counters;
    /** How long a selector-registered connection may go without a read or write before its rings go back; 0: never. */
    private volatile long idleReleaseNs = DEFAULT_IDLE_RELEASE_MS * 1_000_000L;

    /**
     * A connection registered with a selector that has not been read or written for this long gives its rings back
     * (as {@code tern serve --http} does between requests), so that a server holding many idle connections keeps their
     * control blocks only; {@code tern.releaseIdleMs} changes it.
     */
    static final long DEFAULT_IDLE_RELEASE_MS = 1_000;
    /** The longest idle time {@code tern.releaseIdleMs} (and {@code tern exec --release-idle}) takes: a day. */
    public static final long MAX_IDLE_RELEASE_MS = 86_400_000L;
    /** The longest {@code tern.shutdownLinger} (and {@code tern exec --shutdown-linger}): an hour, in seconds. */
    public static final int MAX_SHUTDOWN_LINGER_SECONDS = 3600;

    /**
     * The stack's runner thread is a daemon: a program whose main returns exits as it does on the JDK's provider
     * (which has no thread); its shutdown hook closes the stack.
     */
    static final java.util.concurrent.ThreadFactory DAEMON_THREADS = task -> {
        final Thread thread = new Thread(task);
        thread.setDaemon(true);
        return thread;
    };

    /** An exception escaped a turn of the stack's loop: a bug (bad input is counted and dropped, never thrown). */
    static void reportStackFailure(Throwable error) {
        System.err.println("tern: the stack's loop threw (counted as stack.poll_errors): " + error);
    }

    /**
     * The system-wide provider: the JDK makes it from the {@code java.nio.channels.spi.SelectorProvider} property
     * and calls this constructor. Reads {@code tern.*} system properties; a malformed value or rules file fails here
     * with one line naming it.
     */
    public TernSelectorProvider() {
        this(System.getProperties());
    }

    /** A provider configured by {@code properties} ({@code tern.link}, {@code tern.ip}, {@code tern.rules}, ...). */
    public TernSelectorProvider(Properties properties) {
        this.network = TernNetwork.fromProperties(properties);
        this.fixedStack = null;
        this.fixedSharded = null;
        this.ownedRunner = null;
        final Rules configured = rulesFrom(properties, network.address());
        this.rules = !ipv6Channels() ? configured : network.slaac()
            ? configured.withIpv6(this::currentIpv6Addresses) : configured.withIpv6(network.ipv6Addresses());
        this.idleReleaseNs = idleReleaseFrom(properties) * 1_000_000L;
        Runtime.getRuntime().addShutdownHook(new Thread(this::close, "tern-provider-shutdown"));
    }

    private TernSelectorProvider(NetStack stack, StackShards sharded, StackRunner ownedRunner, Rules rules) {
        this.network = null;
        this.fixedStack = stack;
        this.fixedSharded = sharded;
        this.ownedRunner = ownedRunner;
        this.rules = Objects.requireNonNull(rules);
        this.counters = NioCounters.register(stack);
    }

    /**
     * A provider over {@code stack} with the default rules: it starts a {@link StackRunner} for the stack, which
     * nothing else may poll from now on; {@link #close()} stops it and closes the stack.
     */
    public static TernSelectorProvider open(NetStack stack) {
        return open(stack, Rules.defaults(stack.address()).withIpv6(ipv6Addresses(stack)));
    }

    /** The IPv6 addresses of {@code stack} with their prefixes (none without IPv6, or with preferIPv4Stack). */
    static java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> ipv6Addresses(NetStack stack) {
        if (stack.ipv6() == null || !ipv6Channels()) {
            return java.util.List.of();
        }
        final java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> addresses = new java.util.ArrayList<>();
        final dev.tern.ipv6.Ipv6Addresses configured = stack.ipv6().addresses();
        for (int i = 0; i < configured.count(); i++) {
            addresses.add(configured.address(i));
        }
        return addresses;
    }

    /**
     * With SLAAC ({@code tern.ip6=auto}) the stack's IPv6 addresses now, those formed from routers' prefixes
     * included, read on its thread; the configured ones while the stack cannot be opened. Cold path: a connect or a
     * bind to an IPv6 address asks.
     */
    private java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> currentIpv6Addresses() {
        final NetStack stack;
        try {
            stack = stack();
        } catch (IOException e) {
            return network.ipv6Addresses();
        }
        return stack.call(() -> ipv6Addresses(stack));
    }

    /** {@link #open(NetStack)} with {@code rules}. */
    public static TernSelectorProvider open(NetStack stack, Rules rules) {
        final StackRunner runner = StackRunner.start(stack, new BackoffIdleStrategy(100, 10, 1_000, 100_000),
            TernSelectorProvider::reportStackFailure, DAEMON_THREADS);
        return new TernSelectorProvider(stack, null, runner, rules);
    }

    /** A provider over a stack that {@code runner} already drives (the caller keeps owning both). */
    public static TernSelectorProvider over(StackRunner runner, Rules rules) {
        return new TernSelectorProvider(runner.stack(), null, null, rules);
    }

    /**
     * A provider over a sharded stack whose runners the caller started ({@link StackShards#start}) and keeps owning:
     * a server channel listens on every shard, an active open goes to the shards in turn (or, from a bound port, to
     * the shard its replies steer to), a datagram channel lives on shard 0 and claims its port there
     * ({@link dev.tern.stack.UdpSocket#steerPortHere}), and a selector watches channels of every shard.
     */
    public static TernSelectorProvider over(StackShards shards, Rules rules) {
        return new TernSelectorProvider(shards.shard(0), shards.count() > 1 ? shards : null, null, rules);
    }

    /**
     * Checks the {@code tern.*} settings in {@code properties} without opening anything: the link description and the
     * rules. Throws IllegalArgumentException with one line naming what is wrong ("FILE:LINE: reason" for rules).
     */
    public static void checkConfiguration(Properties properties) {
        rulesFrom(properties, TernNetwork.fromProperties(properties).address());
        idleReleaseFrom(properties);
    }

    /** {@code tern.releaseIdleMs}: milliseconds, 0 for never; the default when unset. */
    static long idleReleaseFrom(Properties properties) {
        final String text = properties.getProperty("tern.releaseIdleMs");
        if (text == null) {
            return DEFAULT_IDLE_RELEASE_MS;
        }
        final long millis;
        try {
            millis = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("tern.releaseIdleMs wants milliseconds (0 for never), got '" + text + "'");
        }
        if (millis < 0 || millis > MAX_IDLE_RELEASE_MS) {
            throw new IllegalArgumentException("tern.releaseIdleMs wants 0.." + MAX_IDLE_RELEASE_MS + " milliseconds, got "
                + millis);
        }
        return millis;
    }

    /**
     * Sets how long a connection registered with one of this provider's selectors may go without a read or a write
     * before it gives its rings back to the stack ({@link TcpConnection#releaseIdleBuffers}): a selection checks the
     * registered connections once per such period, and releases those that were neither read nor written during the
     * whole period before and have nothing unread or unacknowledged, so a connection goes between one and two periods
     * after its last use. Arriving data or the next write brings the rings back. 0 turns it off. Returns this.
     */
    public TernSelectorProvider releaseIdleBuffersAfter(Duration idle) {
        if (idle.isNegative()) {
            throw new IllegalArgumentException("a negative idle time: " + idle);
        }
        idleReleaseNs = idle.toNanos();
        return this;
    }

    /** See {@link #releaseIdleBuffersAfter}; 0 when off. */
    long idleReleaseNs() {
        return idleReleaseNs;
    }

    /**
     * Routes the classic {@code java.net.Socket}, {@code ServerSocket}, {@code DatagramSocket} and
     * {@code MulticastSocket} through the system-wide provider (which must be this class) with the JDK's factory
     * hooks: {@code tern exec}'s agent calls it unless {@code tern.classic=false}. Returns false when another factory
     * was set already (the JDK allows one each).
     */
    public static boolean installClassicSockets() {
        final boolean streams = TernSocketImpl.install();
        final boolean datagrams = TernDatagramSocketImpl.install();
        return streams && datagrams;
    }

    /** {@code tern.rules.add} (inline, ';'-separated) then the file {@code tern.rules}. */
    static Rules rulesFrom(Properties properties, InterfaceAddress address) {
        Rules rules = Rules.defaults(address);
        final String inline = properties.getProperty("tern.rules.add");
        if (inline != null) {
            rules = rules.then(Rules.parse(inline.replace(';', '\n'), "tern.rules.add", address));
        }
        final String file = properties.getProperty("tern.rules");
        if (file != null) {
            rules = rules.then(Rules.load(Path.of(file), address));
        }
        return rules;
    }

    public Rules rules() {
        return rules;
    }

    /**
     * The stack Tern's channels run on (shard 0 of a sharded one), opened now if it was not yet; IOException (cause
     * and fix) if it cannot be.
     */
    public NetStack stack() throws IOException {
        final NetStack stack = fixedStack != null ? fixedStack : network.stack();
        if (counters == null) {
            synchronized (this) {
                if (counters == null) {
                    counters = NioCounters.register(stack);
                }
            }
        }
        return stack;
    }

    /** The sharded stack the channels run on, opened now if it was not yet; null when they run on one stack. */
    private StackShards sharded() throws IOException {
        stack();
        return network != null ? network.sharded() : fixedSharded;
    }

    /** The stacks in shard order: {@link #stack()} alone unless sharded. */
    List<NetStack> shards() throws IOException {
        final StackShards sharded = sharded();
        return sharded == null ? List.of(stack()) : sharded.shards();
    }

    /**
     * Listens on {@code port} on every shard ({@link StackShards#listen}: all or none), or on the one stack; the
     * listeners in shard order.
     */
    TcpListener[] listen(int port, int backlog, TcpOptions options) throws IOException, TernSocketException {
        final StackShards sharded = sharded();
        return sharded == null ? new TcpListener[] {stack().listen(port, backlog, options)}
            : sharded.listen(port, backlog, options).toArray(TcpListener[]::new);
    }

    /**
     * The stack a TCP active open to {@code remoteAddress:remotePort} runs on: from a bound {@code localPort}, the
     * shard the replies' 4-tuple steers to; from an ephemeral port (0), the shards in turn, each picking a port whose
     * replies come back to it.
     */
    NetStack stackForConnect(int remoteAddress, int remotePort, int localPort) throws IOException {
        final StackShards sharded = sharded();
        final NetStack unplaced = unplacedConnect(sharded, localPort);
        if (unplaced != null) {
            return unplaced;
        }
        final NetStack first = sharded.shard(0);
        return sharded.shard(first.shardRule().shardOf(remoteAddress, first.address().address(), remotePort, localPort,
            sharded.count()));
    }

    /**
     * {@link #stackForConnect} to an IPv6 peer: with a local port, the shard the link steers the replies to, from the
     * source address the stack would pick (RFC 6724); the next shard in turn for an ephemeral port.
     */
    NetStack stackForConnect6(dev.tern.core.net.Ipv6Address remote, int remotePort, int localPort) throws IOException {
        final StackShards sharded = sharded();
        final NetStack unplaced = unplacedConnect(sharded, localPort);
        if (unplaced != null) {
            return unplaced;
        }
        final NetStack first = sharded.shard(0);
        final long[] source = first.call(() -> {
            final int index = first.ipv6().addresses().sourceFor(remote.high(), remote.low());
            return index < 0 ? null
                : new long[] {first.ipv6().addresses().high(index), first.ipv6().addresses().low(index)};
        });
        if (source == null) {
            return first; // no usable source yet: the connect fails there as it would on any shard
        }
        return sharded.shard(dev.tern.ethernet.link.ShardSteering.shardOf6(first.shardRule(), remote.high(), remote.low(),
            source[0], source[1], remotePort, localPort, sharded.count()));
    }

    /**
     * The stack of a connect that no 4-tuple places: the one stack when not sharded, the next shard in turn for an
     * ephemeral port (each shard picks one whose replies reach it); null when the bound port decides the shard.
     */
    private NetStack unplacedConnect(StackShards sharded, int localPort) throws IOException {
        if (sharded == null) {
            return stack();
        }
        return localPort == 0 ? sharded.nextShard() : null;
    }

    /** The counters of the stack's nio channels (opened, closed, sent to the kernel); null before the stack opens. */
    NioCounters counters() {
        return counters;
    }

    /**
     * The side that serves a channel the rules gave to Tern: Tern, or the kernel when the link cannot open and the
     * rules say {@code link-failure kernel}.
     */
    Rules.Side ternOrFallback() throws IOException {
        try {
            stack();
            return Rules.Side.TERN;
        } catch (IOException e) {
            if (rules.kernelOnLinkFailure()) {
                return Rules.Side.KERNEL;
            }
            throw e;
        }
    }

    /**
     * A kernel channel was made: counted when the stack is open (a configured provider does not open its link only to
     * count channels that never use it).
     */
    void countKernelChannel() {
        final NioCounters c = counters;
        if (c != null) {
            c.add(c.kernelChannels, 1);
        }
    }

    SelectorProvider kernel() {
        return KernelProvider.get();
    }

    /** As the JDK's: an {@code INET6} channel, dual-stack, unless {@code java.net.preferIPv4Stack} leaves only IPv4. */
    @Override
    public DatagramChannel openDatagramChannel() throws IOException {
        return new TernDatagramChannel(this, ipv6Channels() ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
    }

    @Override
    public DatagramChannel openDatagramChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family, "family");
        if (family == StandardProtocolFamily.INET || (family == StandardProtocolFamily.INET6 && ipv6Channels())) {
            return new TernDatagramChannel(this, family);
        }
        if (family == StandardProtocolFamily.INET6) {
            return TernDatagramChannel.kernel(this, kernel().openDatagramChannel(family));
        }
        throw new UnsupportedOperationException("Protocol family not supported");
    }

    @Override
    public Pipe openPipe() throws IOException {
        return new TernPipe(this, kernel().openPipe());
    }

    @Override
    public AbstractSelector openSelector() throws IOException {
        return new TernSelector(this);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel() throws IOException {
        return new TernServerSocketChannel(this, null);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family, "family");
        if (family == StandardProtocolFamily.INET || (family == StandardProtocolFamily.INET6 && ipv6Channels())) {
            return new TernServerSocketChannel(this, null);
        }
        return TernServerSocketChannel.kernel(this, kernel().openServerSocketChannel(family));
    }

    /**
     * Whether INET6 channels are Tern's: as the JDK's, they are dual-stack (the rules still send an IPv6 peer to the
     * kernel when Tern's stack has no IPv6). With {@code java.net.preferIPv4Stack} the JDK has no INET6
     * channels at all; the kernel's provider then answers as the JDK does.
     */
    private static boolean ipv6Channels() {
        return !Boolean.getBoolean("java.net.preferIPv4Stack");
    }

    @Override
    public SocketChannel openSocketChannel() throws IOException {
        return new TernSocketChannel(this);
    }

    @Override
    public SocketChannel openSocketChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family, "family");
        if (family == StandardProtocolFamily.INET || (family == StandardProtocolFamily.INET6 && ipv6Channels())) {
            return new TernSocketChannel(this);
        }
        return TernSocketChannel.kernel(this, kernel().openSocketChannel(family));
    }

    /**
     * The kernel's inherited channel ({@code inetd}), as it is: it can be used, but not registered with a Tern
     * selector.
     */
    @Override
    public Channel inheritedChannel() throws IOException {
        return kernel().inheritedChannel();
    }

    /** Stops the stack's runner and closes the stack, when this provider started it ({@link #open}). */
    @Override
    public void close() {
        final NioCounters c = counters;
        if (c != null) {
            c.shut(); // channels may still close on other threads: nothing writes the counters file once it goes
        }
        if (ownedRunner != null) {
            ownedRunner.close();
        }
        if (network != null) {
            network.close();
        }
    }

    @Override
    public String toString() {
        return "TernSelectorProvider(" + (network != null ? network : fixedStack.name() + " at " + fixedStack.address()
            + (fixedSharded != null ? " (" + fixedSharded.count() + " shards)" : ""))
            + ", " + rules + ")";
    }
}
