package dev.tern.conformance.fuzz;

import dev.tern.arp.ArpConfig;
import dev.tern.conformance.replay.Capture;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.conformance.replay.Replay;
import dev.tern.conformance.replay.ReplayScript;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.ipv4.Ipv4Config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs one fuzz input through a fresh stack and checks the invariants every input must keep:
 * <ul>
 *   <li>nothing is thrown out of the poll loop, and {@code stack.internal_errors} stays 0 (the Ethernet layer turns
 *       an exception in a protocol layer into that counter; its first exception becomes the cause of the failure);</li>
 *   <li>the poll loop goes idle at every instant (no livelock);</li>
 *   <li>no buffer leaks: every transmit buffer the stack claimed went back to the link, and 61 s after the last
 *       frame (past ARP's 3 s resolution and the 30 s reassembly timeout) no packet waits for ARP, unless a TCP
 *       connection is left (it may still be retransmitting to a peer that went silent);</li>
 *   <li>everything the stack sends is well-formed ({@link OutputChecks}), its ICMP errors answer only datagrams
 *       that may be answered, and the output stays proportionate to the input (no amplification loop).</li>
 * </ul>
 * The frames go through the real poll loop, from a {@code PcapReplayLink}, on virtual time: a fresh stack per input
 * keeps every finding reproducible from its input alone.
 *
 * <p>The stack is 198.18.0.2/24 at 02:00:00:00:00:02; the peer the harnesses play is 198.18.0.1 at
 * 02:00:00:00:00:01. Reassembly slots and ARP's pending pool are smaller than the defaults, so a fresh stack is
 * cheap and their limits are within the fuzzer's reach.
 */
final class FuzzStack {
    static final long MAC = 0x0200_0000_0002L;
    static final long PEER_MAC = 0x0200_0000_0001L;
    static final int IP = 0xC612_0002;
    static final int PEER_IP = 0xC612_0001;
    static final int BROADCAST_IP = 0xC612_00FF;
    static final int MTU = 1500;
    static final InterfaceAddress ADDRESS = new InterfaceAddress(IP, 24);
    private static final long START_NS = 1_000_000_000_000_000_000L;
    private static final long AFTERMATH_NS = 61_000_000_000L;
    private static final Path NOWHERE = Path.of("fuzz-input");
    private static final ArpConfig ARP = new ArpConfig(64, 30_000_000_000L, 1_000_000_000L, 3, 3, 5_000_000_000L, 4, 16, 2,
        2_000_000_000L);
    /** IPv4 identification key fixed too, for the same reason as TCP_KEYS below. */
    private static final Ipv4Config IPV4 = Ipv4Config.DEFAULT.withReassemblySlots(4).withIdentificationKey(0x7E57_0003L,
        0x7E57_0004L);
    /** Most frames one received frame may cause: a 65507-byte echo reply is 45 fragments, plus ARP. */
    private static final int MAX_OUTPUT_PER_INPUT = 50;

    /** One frame for the stack: how long after the previous one it arrives, the link's flags, its bytes. */
    record Frame(long delayNs, int rxFlags, byte[] bytes) {
    }

    /**
     * What the application does (sockets to open, data to write; see {@link ReplayScript}): {@code atStart} once the
     * stack is built, {@code afterEach} at the time of every frame (just after the frame is handled), then
     * {@code afterFrame.get(i)} at the time of frame i.
     */
    record Application(List<String> atStart, List<String> afterEach, Map<Integer, List<String>> afterFrame) {
        static final Application NONE = new Application(List.of(), List.of());

        Application(List<String> atStart, List<String> afterEach) {
            this(atStart, afterEach, Map.of());
        }
    }

    /** TCP's ISN and key: fixed, so that a finding reproduces (and the same ISN as the recorded captures). */
    static final ReplayScript.TcpKeys TCP_KEYS = new ReplayScript.TcpKeys(1_000_000_000L, 0x7E57_0001L, 0x7E57_0002L);

    private FuzzStack() {
    }

    /** Runs {@code frames} through a fresh stack; throws {@link AssertionError} when an invariant breaks. */
    static List<CapturedFrame> run(List<Frame> frames) {
        return run(frames, false);
    }

    /**
     * {@link #run(List)} on a stack that has first been asked for its MAC by the peer (an ARP request from
     * 198.18.0.1), so it knows where to send answers. Harnesses that cannot send ARP themselves use this: without it
     * every answer would wait for an ARP reply that never comes, and the output oracle would see nothing.
     */
    static List<CapturedFrame> runWithPeerKnown(List<Frame> frames) {
        return run(frames, true);
    }

    /** {@link #runWithPeerKnown} with an application on the stack's sockets. */
    static List<CapturedFrame> runWithPeerKnown(List<Frame> frames, Application application) {
        return run(frames, true, application, null);
    }

    /** The Fast Open server key of {@link #FAST_OPEN_SERVER}: fixed, so that a finding reproduces. */
    static final dev.tern.tcp.FastOpenKeys FAST_OPEN_KEYS = dev.tern.tcp.FastOpenKeys.of(0x7E57_0004L, 0x7E57_0005L);

    /** TCP as the replay sets it ({@link #TCP_KEYS}), serving Fast Open on every listener with {@link #FAST_OPEN_KEYS}. */
    static final dev.tern.tcp.TcpConfig FAST_OPEN_SERVER = dev.tern.tcp.TcpConfig.builder().fixedIsn(TCP_KEYS.isn())
        .isnKey(TCP_KEYS.key0(), TCP_KEYS.key1())
        .fastOpen(dev.tern.tcp.FastOpen.SERVER | dev.tern.tcp.FastOpen.SERVER_ALL_LISTENERS).fastOpenKeys(FAST_OPEN_KEYS)
        .build();

    /** {@link #runWithPeerKnown(List, Application)} on a stack with TCP configured as {@code tcp}. */
    static List<CapturedFrame> runWithPeerKnown(List<Frame> frames, Application application, dev.tern.tcp.TcpConfig tcp) {
        return run(frames, true, application, tcp);
    }

    /** The peer's ARP request for our address: the stack learns the peer from it (RFC 826) and answers. */
    static byte[] peerArpRequest() {
        return dev.tern.stack.testing.Frames.ethernet(dev.tern.ethernet.wire.MacAddress.BROADCAST, PEER_MAC, 0x0806,
            dev.tern.stack.testing.Frames.arp(1, PEER_MAC, PEER_IP, 0, IP));
    }

    private static List<CapturedFrame> run(List<Frame> frames, boolean peerKnown) {
        return run(frames, peerKnown, Application.NONE, null);
    }

    private static List<CapturedFrame> run(List<Frame> frames, boolean peerKnown, Application application,
                                           dev.tern.tcp.TcpConfig tcp) {
        final List<CapturedFrame> captured = new ArrayList<>(frames.size() + 1);
        final List<Integer> flagList = new ArrayList<>(frames.size() + 1);
        long atNs = START_NS;
        if (peerKnown) {
            captured.add(new CapturedFrame(atNs, peerArpRequest()));
            flagList.add(0);
        }
        for (Frame frame : frames) {
            atNs += frame.delayNs();
            captured.add(new CapturedFrame(atNs, frame.bytes()));
            flagList.add(frame.rxFlags());
        }
        final int[] flags = flagList.stream().mapToInt(Integer::intValue).toArray();
        final List<ReplayScript.Action> actions = new ArrayList<>();
        for (String line : application.atStart()) {
            actions.add(action(START_NS, line));
        }
        long frameAt = START_NS;
        for (int i = 0; i < frames.size(); i++) {
            frameAt += frames.get(i).delayNs();
            for (String line : application.afterEach()) {
                actions.add(action(frameAt, line));
            }
            for (String line : application.afterFrame().getOrDefault(i, List.of())) {
                actions.add(action(frameAt, line));
            }
        }
        final ReplayScript script = new ReplayScript(NOWHERE, new ReplayScript.Start(START_NS, ADDRESS, MAC, MTU, TCP_KEYS),
            List.copyOf(actions));
        try (Replay replay = Replay.of(Capture.of(NOWHERE, captured), script,
            stack -> {
                stack.name("fuzz").arp(ARP).ipv4(IPV4);
                if (tcp != null) {
                    stack.tcp(tcp);
                }
            }, link -> link.rxFlagsPerFrame(flags).batchWindowNs(0))) {
            replay.runUntil(atNs + AFTERMATH_NS);
            final long internalErrors = replay.stack().counters().value("stack.internal_errors");
            if (internalErrors != 0) {
                throw new AssertionError("stack.internal_errors = " + internalErrors + ": a layer threw while handling a frame",
                    replay.stack().ethernet().firstInternalError());
            }
            if (replay.link().buffersInUse() != 0) {
                throw new AssertionError(replay.link().buffersInUse() + " transmit buffer(s) claimed and never committed or aborted");
            }
            final int pending = replay.stack().neighbours().pendingPackets();
            // A TCP connection whose peer went silent retransmits for minutes (RFC 6298 backoff, 15 retries): each
            // retransmission may wait for ARP again once the peer's entry expired. Only without TCP connections
            // must nothing wait for ARP by now.
            if (pending != 0 && replay.stack().tcp().connectionCount() == 0) {
                throw new AssertionError(pending + " packet(s) still wait for ARP 61 s after the last frame");
            }
            final List<CapturedFrame> sent = replay.transmitted();
            OutputChecks.check(sent);
            OutputChecks.checkErrorsAgainstInput(sent, captured);
            final int bound = 2 + MAX_OUTPUT_PER_INPUT * captured.size();
            if (sent.size() > bound) {
                throw new AssertionError("the stack sent " + sent.size() + " frames for " + captured.size() + " received (at most "
                    + bound + " expected)");
            }
            return sent;
        }
    }

    private static ReplayScript.Action action(long atNs, String line) {
        return ReplayScript.parse(NOWHERE, List.of("0 start 198.18.0.2/24 mac=02:00:00:00:00:02 mtu=1500", atNs + " " + line))
            .actions().getFirst();
    }
}
