package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afxdp.AfXdpLink;
import dev.tern.afxdp.AfXdpOptions;
import dev.tern.conformance.replay.ReplayScript;
import dev.tern.core.testing.ExternalTools;
import dev.tern.ethernet.link.Link;
import dev.tern.stack.LinkIdleStrategy;
import dev.tern.stack.NetStack;
import dev.tern.stack.Pinger;
import dev.tern.stack.StackRunner;
import dev.tern.tcp.TcpConfig;
import dev.tern.testkit.netns.Commands;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;

/**
 * The interop rig: the Linux kernel on one end of a veth pair and a Tern stack on the other, each in a namespace the
 * rig made ({@link NetnsHarness}), Tern polled on its own thread ({@link StackLoop}).
 *
 * <pre>
 *   peer namespace: kernel, peer0 198.18.0.1/24  <== veth ==>  tern namespace: tern0 (no kernel address)
 *                                                              AfPacketLink + NetStack 198.18.0.2/24
 * </pre>
 * or, where the setup says {@link VethSetup.TernLink#AF_XDP}, an {@link AfXdpLink} on tern0 (copy mode, its steering
 * program attached for the time of the test).
 *
 * <p>Without root (or iproute2) the test is skipped with the reason, except under CI ({@code TERN_REQUIRE_NETNS=1}),
 * where it fails. {@link #close()} stops the loop (failing the test if anything escaped {@code poll}), closes the
 * stack and deletes both namespaces, on every path.
 *
 * <p>The rig also writes down what the application did ({@link #actions()}, a {@link ReplayScript}), so that a
 * capture taken of the run can be replayed.
 */
final class VethRig implements AutoCloseable {
    static final String TERN_CIDR = NetnsHarness.TERN_ADDRESS + "/" + NetnsHarness.PREFIX_LENGTH;

    private final VethSetup setup;
    private final NetnsHarness net;
    private final KernelPeer kernel;
    private final List<String> actions = Collections.synchronizedList(new ArrayList<>());
    private Link link;
    private AfXdpLink afXdpLink;
    private NetStack stack;
    private StackLoop loop;
    private StackRunner runner;
    private Thread owner;
    private final LinkedBlockingQueue<PingReply> replies = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<PingError> pingErrors = new LinkedBlockingQueue<>();

    /** One echo reply Tern's pinger saw. */
    record PingReply(int source, int sequence, int dataLength, boolean intact) {
    }

    /** One ICMP error about Tern's echo requests. */
    record PingError(int reporter, int type, int code, int sequence) {
    }

    private VethRig(VethSetup setup, NetnsHarness net) {
        this.setup = setup;
        this.net = net;
        this.kernel = new KernelPeer(net);
    }

    /**
     * Makes the namespaces and the veth pair and starts tcpdump on the kernel's end, writing the exchange to
     * {@code conformance/target/interop-captures/CLASS.METHOD-MTU-OFFLOADS.pcap} (kept for looking into a failure,
     * bounded at 5000 frames); Tern is not started yet ({@link #startTern()}).
     */
    static VethRig create(VethSetup setup) {
        return create(setup, false);
    }

    /**
     * {@link #create(VethSetup)}, with a wire namespace between the ends when {@code wire} (a bridge where
     * {@link dev.tern.testkit.netns.PacketLoss} drops packets so that neither sender learns of it).
     */
    static VethRig create(VethSetup setup, boolean wire) {
        NetnsTesting.assumeNetns();
        ExternalTools.require("ethtool", "ethtool");
        final VethRig rig = new VethRig(setup, NetnsHarness.create(setup.harnessOptions().wire(wire)));
        try {
            rig.captureForDiagnosis();
            return rig;
        } catch (RuntimeException | Error e) {
            rig.close();
            throw e;
        }
    }

    private void captureForDiagnosis() {
        final String root = System.getProperty("tern.root");
        if (root == null || Commands.find("tcpdump").isEmpty()) {
            return;
        }
        final String test = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> frames
            .filter(f -> f.getDeclaringClass().getSimpleName().endsWith("Test"))
            .map(f -> f.getDeclaringClass().getSimpleName() + "." + f.getMethodName()).findFirst().orElse("interop"));
        try {
            final Path directory = Files.createDirectories(Path.of(root, "conformance", "target", "interop-captures"));
            final Path file = directory.resolve(test + (setup.afXdp() ? "-afxdp-" : "-") + setup.mtu() + "-offloads-"
                + (setup.offloads() ? "on" : "off")
                + (!setup.afXdp() && setup.vnetHeader() != setup.offloads() ? "-vnet-" + setup.vnetHeader() : "")
                + ".pcap");
            kernel.tcpdump(file, 5000);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@link #create} and {@link #startTern()}. */
    static VethRig start(VethSetup setup) {
        final VethRig rig = create(setup);
        try {
            rig.startTern();
            return rig;
        } catch (RuntimeException | Error e) {
            rig.close();
            throw e;
        }
    }

    /**
     * Closes each of {@code resources} that is not null, in order (a stack before its link, the link before the
     * namespaces), each even when one before it failed; the first failure is thrown with the later ones suppressed.
     */
    static void closeInOrder(AutoCloseable... resources) {
        Throwable first = null;
        for (AutoCloseable resource : resources) {
            try {
                if (resource != null) {
                    resource.close();
                }
            } catch (Throwable t) {
                if (first == null) {
                    first = t;
                } else {
                    first.addSuppressed(t);
                }
            }
        }
        if (first instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (first instanceof Error error) {
            throw error;
        }
        if (first != null) {
            throw new IllegalStateException(first);
        }
    }

    /** Opens Tern's link on tern0, builds the stack (198.18.0.2/24) and starts polling it. */
    void startTern() {
        buildStack(builder -> { });
        final Link polled = link;
        loop = new StackLoop(stack, () -> polled.awaitFrames(1));
        call(s -> {
            s.pinger().listener(new Pinger.Listener() {
                @Override
                public void onReply(int source, int sequence, int dataLength, int ttl, long roundTripNs, boolean intact) {
                    replies.add(new PingReply(source, sequence, dataLength, intact));
                }

                @Override
                public void onError(int reporter, int type, int code, int sequence) {
                    pingErrors.add(new PingError(reporter, type, code, sequence));
                }
            });
            return null;
        });
    }

    /**
     * Opens Tern's link on tern0 and builds the stack (198.18.0.2/24, then {@code customize}), owned by the calling
     * thread, which polls it from now on: through {@link #pollUntil}, or by the socket calls that wait (a socket's
     * blocking call on the owner thread polls the stack while it waits). Nothing escapes {@code poll} unnoticed: it
     * would be thrown to the test. The socket tests use this: one thread, as the {@code tern} command runs.
     */
    NetStack startTernHere(Consumer<NetStack.Builder> customize) {
        buildStack(customize);
        owner = Thread.currentThread();
        return stack;
    }

    /**
     * Opens Tern's link and builds the stack as {@link #startTernHere}, driven by a {@link StackRunner} on its own
     * thread (as an embedder would); socket calls from any thread are handed to it. When idle the runner spins
     * briefly, then waits for frames in {@code poll(2)} for at most 1 ms ({@link LinkIdleStrategy}).
     */
    NetStack startTernRunner(Consumer<NetStack.Builder> customize) {
        buildStack(customize);
        runner = StackRunner.start(stack, new LinkIdleStrategy(stack));
        return stack;
    }

    /**
     * {@link #startTernHere} for a capture that will be replayed: the stack runs on an {@link EpochClock} (the
     * capture's time) and TCP's ISN and key are fixed (written on the script's start line), so that a replay makes
     * the same ISNs, timestamps and ports.
     */
    NetStack startTernHereForReplay() {
        final ReplayScript.TcpKeys keys = new ReplayScript.TcpKeys(RECORDING_ISN, 0x7E57_0001L, 0x7E57_0002L);
        link = openTernLink();
        final EpochClock clock = new EpochClock();
        final long startNs = clock.nanoTime();
        stack = NetStack.builder().name("conformance").link(link).address(TERN_CIDR).countersInMemory().clock(clock)
            .tcp(TcpConfig.builder().fixedIsn(keys.isn()).isnKey(keys.key0(), keys.key1()).build()).build();
        actions.add(ReplayScript.startLine(startNs, stack.address(), stack.macAddress(), stack.ethernet().mtu(), keys));
        owner = Thread.currentThread();
        return stack;
    }

    /** The ISN of every connection of a recorded stack (any value would do; this one is easy to spot in a dump). */
    static final long RECORDING_ISN = 1_000_000_000L;

    /**
     * The setup's link on tern0: AF_PACKET through the harness (which closes it), or AF_XDP for Tern's address,
     * opened inside the Tern namespace and closed by {@link #close()} after the stack.
     */
    private Link openTernLink() {
        if (!setup.afXdp()) {
            return net.openTernLink(AfPacketLink::open, setup.linkOptions());
        }
        afXdpLink = net.ternNamespace().call(() -> AfXdpLink.open(NetnsHarness.TERN_INTERFACE,
            AfXdpOptions.forAddress(NetnsHarness.TERN_IPV4)));
        return afXdpLink;
    }

    private void buildStack(Consumer<NetStack.Builder> customize) {
        link = openTernLink();
        final long startNs = epochNowNs();
        final NetStack.Builder builder = NetStack.builder().name("conformance").link(link).address(TERN_CIDR).countersInMemory();
        customize.accept(builder);
        stack = builder.build();
        actions.add(ReplayScript.startLine(startNs, stack.address(), stack.macAddress(), stack.ethernet().mtu()));
    }

    /** The stack (for {@link #startTernHere} and {@link #startTernRunner}; the loop's stack only through {@link #call}). */
    NetStack stack() {
        return stack;
    }

    /**
     * Polls the stack this thread owns ({@link #startTernHere}) until {@code done} holds or {@code timeout} passes;
     * returns whether it held. Waits for frames (1 ms at most) when a poll finds nothing to do.
     */
    boolean pollUntil(BooleanSupplier done, Duration timeout) {
        if (owner != Thread.currentThread()) {
            throw new IllegalStateException("pollUntil is for the thread that started the stack with startTernHere");
        }
        return pollUntil(stack, done, timeout);
    }

    /**
     * Polls {@code stack} on the calling thread (its owner) until {@code done} holds or {@code timeout} passes, waiting
     * up to 1 ms on the link when a turn found nothing; false on timeout.
     */
    static boolean pollUntil(NetStack stack, BooleanSupplier done, Duration timeout) {
        return pollUntil(stack, done, timeout, 0);
    }

    /**
     * As {@link #pollUntil(NetStack, BooleanSupplier, Duration)}, as an application busy between its turns would
     * poll: after a turn that did work the thread is away for {@code pauseAfterWorkNs}.
     */
    static boolean pollUntil(NetStack stack, BooleanSupplier done, Duration timeout, long pauseAfterWorkNs) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            if (stack.doWork() == 0) {
                stack.link().awaitFrames(1);
            } else if (pauseAfterWorkNs > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(pauseAfterWorkNs);
            }
        }
        return true;
    }

    /** True when the calling thread owns the stack ({@link #startTernHere}, {@link #startTernHereForReplay}). */
    boolean ownedByThisThread() {
        return owner == Thread.currentThread();
    }

    /** Polls the stack this thread owns for {@code duration}. */
    void pollFor(Duration duration) {
        pollUntil(() -> false, duration);
    }

    /** Records one application call for the replay script ({@link ReplayScript}), stamped with the stack's clock now. */
    void recordAction(String verbAndArguments) {
        actions.add(stack.clock().epochNanos(stack.clock().nanoTime()) + " " + verbAndArguments);
    }

    static long epochNowNs() {
        final Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    VethSetup setup() {
        return setup;
    }

    NetnsHarness net() {
        return net;
    }

    KernelPeer kernel() {
        return kernel;
    }

    long ternMac() {
        return stack.macAddress();
    }

    /** Runs {@code call} on the stack's thread. */
    <T> T call(Function<NetStack, T> call) {
        return loop.call(call);
    }

    /** A counter of Tern's stack (counters are safe to read from any thread). */
    long counter(String label) {
        return stack.counters().value(label);
    }

    /** Every non-zero counter whose label contains {@code part}, sorted, for assertions and messages. */
    Map<String, Long> countersContaining(String part) {
        final Map<String, Long> found = new TreeMap<>();
        stack.counters().reader().forEach((value, id, label) -> {
            if (label.contains(part) && value != 0) {
                found.put(label, value);
            }
        });
        return found;
    }

    /** Sends one echo request from Tern's pinger (recorded as a replay action); returns the IPv4 layer's result. */
    int ping(int destination, int sequence, int size) {
        return call(s -> {
            final long atNs = epochNowNs();
            final int result = s.pinger().send(destination, sequence, size, s.clock().nanoTime());
            actions.add(ReplayScript.pingLine(atNs, destination, s.pinger().identifier(), sequence, size));
            return result;
        });
    }

    /** Sends one echo request to the kernel peer and waits up to 3 s for its reply; null when none came. */
    PingReply pingKernelAndWait(int sequence, int size) {
        final int result = ping(PEER_IPV4, sequence, size);
        if (result != 0) {
            throw new AssertionError("Tern's pinger could not send (" + result + ")");
        }
        try {
            return replies.poll(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Replies seen so far that {@link #pingKernelAndWait} has not returned. */
    List<PingReply> moreReplies() {
        final List<PingReply> more = new ArrayList<>();
        replies.drainTo(more);
        return more;
    }

    List<PingError> pingErrors() {
        return List.copyOf(pingErrors);
    }

    /** The application's actions so far, as the lines of a replay script. */
    List<String> actions() {
        return List.copyOf(actions);
    }

    /** Stops the loop (fails if anything escaped {@code poll}), closes the stack and deletes the namespaces. */
    @Override
    public void close() {
        try {
            if (loop != null) {
                loop.close();
            }
        } finally {
            try {
                if (runner != null) {
                    runner.close();
                }
                closeInOrder(stack, afXdpLink);
            } finally {
                net.close();
            }
        }
    }
}
