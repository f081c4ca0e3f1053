package dev.tern.conformance.replay;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.VirtualClock;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.stack.NetStack;
import dev.tern.stack.Pinger;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpOptions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Replays a capture through a fresh stack on virtual time: the stack is built when the recorded one was (the
 * script's {@code start}), the peer's frames arrive at their recorded timestamps through a {@link PcapReplayLink},
 * the application's recorded calls ({@link ReplayScript}) are made at theirs, and the stack's timers fire on the
 * way (UDP sockets and TCP connections are the stack's own, driven on the replay's thread, which owns the stack).
 * The frames it transmits can then be compared with the ones the capture shows the recorded stack sending
 * ({@link FrameComparison}).
 *
 * <p>Virtual time is the capture's own clock (nanoseconds since the epoch), so a 30-second reassembly timeout in a
 * capture replays in microseconds, and the same capture always replays the same way.
 *
 * <p>Owned by one thread.
 */
public final class Replay implements AutoCloseable {
    /** Virtual time kept after the last frame of the capture, for the stack's answer to it. */
    public static final long LINGER_NS = 50_000_000L;
    /**
     * The kernel's frames less than this apart, with none of the recorded stack's in between, are handed to the
     * stack in one receive batch ({@link PcapReplayLink.Builder#batchWindowNs}), as the recorded stack most likely
     * took them: its poll loop sees every frame that reached the ring since the last turn.
     */
    public static final long RECEIVE_BATCH_WINDOW_NS = 2_000_000L;

    private final Capture capture;
    private final ReplayScript script;
    private final VirtualClock clock;
    private final PcapReplayLink link;
    private final NetStack stack;
    private final Arena arena = Arena.ofConfined();
    private MemorySegment pingPattern;
    private MemorySegment buffer;
    private int nextAction;
    private final Map<Integer, UdpSocket> udpSockets = new HashMap<>();
    private final Map<Integer, TcpListener> tcpListeners = new HashMap<>();
    private final Map<Integer, TcpConnection> tcpConnections = new HashMap<>();

    private Replay(Capture capture, ReplayScript script, Consumer<NetStack.Builder> customize,
                   Consumer<PcapReplayLink.Builder> customizeLink) {
        this.capture = capture;
        this.script = script;
        final ReplayScript.Start start = script.start();
        this.clock = new VirtualClock(start.atNs());
        final PcapReplayLink.Builder linkBuilder = PcapReplayLink.builder().name(capture.path().getFileName().toString())
            .capture(capture).mac(start.mac()).mtu(start.mtu()).clock(clock).batchWindowNs(RECEIVE_BATCH_WINDOW_NS);
        customizeLink.accept(linkBuilder);
        this.link = linkBuilder.build();
        final NetStack.Builder builder = NetStack.builder().name("replay").link(link).address(start.address())
            .clock(clock).countersInMemory();
        if (start.tcp() != null) {
            builder.tcp(TcpConfig.builder().fixedIsn(start.tcp().isn()).isnKey(start.tcp().key0(), start.tcp().key1()).build());
        }
        customize.accept(builder);
        this.stack = builder.build();
    }

    /** A replay of {@code capture} as its script ({@code NAME.actions} beside it) says. */
    public static Replay of(Capture capture) {
        return of(capture, ReplayScript.read(ReplayScript.besides(capture.path())), builder -> { });
    }

    public static Replay of(Capture capture, ReplayScript script, Consumer<NetStack.Builder> customize) {
        return new Replay(capture, script, customize, link -> { });
    }

    /** As {@link #of(Capture, ReplayScript, Consumer)}, with the link's builder too (receive flags, offloads). */
    public static Replay of(Capture capture, ReplayScript script, Consumer<NetStack.Builder> customize,
                            Consumer<PcapReplayLink.Builder> customizeLink) {
        return new Replay(capture, script, customize, customizeLink);
    }

    public NetStack stack() {
        return stack;
    }

    public PcapReplayLink link() {
        return link;
    }

    public VirtualClock clock() {
        return clock;
    }

    public ReplayScript script() {
        return script;
    }

    /** Runs until {@link #LINGER_NS} after the capture's last frame (or the script's last action); returns this. */
    public Replay run() {
        long endNs = capture.endNs();
        if (!script.actions().isEmpty()) {
            endNs = Math.max(endNs, script.actions().getLast().atNs());
        }
        return runUntil(endNs + LINGER_NS);
    }

    /** Runs until virtual time {@code endNs}; returns this. */
    public Replay runUntil(long endNs) {
        while (true) {
            final long nowNs = clock.nanoTime();
            pollUntilIdle(nowNs);
            while (nextAction < script.actions().size() && script.actions().get(nextAction).atNs() - nowNs <= 0) {
                apply(script.actions().get(nextAction++));
                pollUntilIdle(nowNs);
            }
            if (nowNs - endNs >= 0) {
                return this;
            }
            long nextNs = Math.min(stack.pollAt(), link.nextArrivalNs());
            if (nextAction < script.actions().size()) {
                nextNs = Math.min(nextNs, script.actions().get(nextAction).atNs());
            }
            if (nextNs - nowNs <= 0) {
                // A timer due now (the wheel's tick granularity) or already handled: move on by a nanosecond.
                nextNs = nowNs + 1;
            }
            clock.advanceTo(Math.min(nextNs, endNs));
        }
    }

    private void pollUntilIdle(long nowNs) {
        for (int round = 0; round < 10_000; round++) {
            if (stack.poll(nowNs) == 0) {
                return;
            }
        }
        throw new IllegalStateException("the stack did not go idle at " + nowNs + " ns after 10000 polls");
    }

    /** Makes one recorded application call. */
    private void apply(ReplayScript.Action action) {
        final long nowNs = clock.nanoTime();
        try {
            switch (action.verb()) {
                case "ping" -> {
                    final int size = action.intOption("size");
                    final int result = stack.ipv4().icmp().sendEchoRequest(Ipv4Address.parse(action.argument(0)),
                        action.intOption("id"), action.intOption("seq"), pingPattern(), 0, size, nowNs);
                    if (result != Ipv4Layer.OK) {
                        throw failed(action, "ping failed with " + result);
                    }
                }
                case "udp-open" -> udpSockets.put(action.intOption("sock"), stack.openUdp());
                case "udp-bind" -> udp(action).bind(action.intOption("port"));
                case "udp-connect" -> udp(action).connect(Ipv4Address.parse(action.argument(0)), action.intOption("port"));
                case "udp-send" -> {
                    final byte[] data = ReplayScript.pattern(action.intOption("length"), action.intOption("pattern"));
                    if (!udp(action).sendTo(Ipv4Address.parse(action.argument(0)), action.intOption("port"),
                        MemorySegment.ofArray(data), 0, data.length)) {
                        throw failed(action, "the send ring was full");
                    }
                }
                case "udp-echo", "udp-receive" -> {
                    final UdpSocket socket = udp(action);
                    final int length = socket.receive(buffer(), 0, (int) buffer().byteSize());
                    if (length < 0) {
                        throw failed(action, "no datagram was waiting");
                    }
                    if (action.verb().equals("udp-echo")
                        && !socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer(), 0, length)) {
                        throw failed(action, "the send ring was full");
                    }
                }
                case "udp-join" -> {
                    final int group = Ipv4Address.parse(action.argument(0));
                    final String sources = action.options().get("sources");
                    if (sources == null) {
                        udp(action).join(group);
                    } else {
                        udp(action).joinSources(group, Arrays.stream(sources.split(",")).mapToInt(Ipv4Address::parse).toArray());
                    }
                }
                case "udp-leave" -> udp(action).leave(Ipv4Address.parse(action.argument(0)));
                case "udp-close" -> udp(action).close();
                case "tcp-listen" -> tcpListeners.put(action.intOption("lsn"), stack.listen(action.intOption("port"), 16));
                case "tcp-close-listener" -> listener(action).close();
                case "tcp-accept" -> {
                    final TcpConnection connection = listener(action).accept();
                    if (connection == null) {
                        throw failed(action, "no connection was waiting");
                    }
                    tcpConnections.put(action.intOption("conn"), connection);
                }
                case "tcp-connect" -> tcpConnections.put(action.intOption("conn"), stack.connect(
                    Ipv4Address.parse(action.argument(0)), action.intOption("port"), action.intOption("local"), TcpOptions.DEFAULT));
                case "tcp-write" -> {
                    final byte[] data = ReplayScript.pattern(action.intOption("length"), action.intOption("pattern"));
                    final int written = tcp(action).write(MemorySegment.ofArray(data), 0, data.length);
                    if (written != data.length) {
                        throw failed(action, "only " + written + " of " + data.length + " bytes fit the send ring");
                    }
                }
                case "tcp-read" -> {
                    final int length = action.intOption("length");
                    final int read = tcp(action).read(buffer(), 0, length);
                    if (read != length) {
                        throw failed(action, "read " + read + " bytes, the recorded application read " + length);
                    }
                }
                case "udp-echo-all" -> echoAll(udp(action));
                case "tcp-accept-all" -> {
                    int conn = action.intOption("conn");
                    TcpConnection connection;
                    while ((connection = listener(action).accept()) != null) {
                        while (tcpConnections.containsKey(conn)) {
                            conn++;
                        }
                        tcpConnections.put(conn, connection);
                    }
                }
                case "tcp-read-all" -> readAll();
                case "tcp-shutdown" -> tcp(action).shutdownOutput();
                case "tcp-close" -> tcp(action).close();
                case "tcp-abort" -> tcp(action).abort();
                default -> throw new IllegalArgumentException(script.path() + " line " + action.line()
                    + ": unknown action '" + action.verb() + "' (see ReplayScript)");
            }
        } catch (TernSocketException e) {
            throw failed(action, e.getMessage());
        }
    }

    /** {@code udp-echo-all}: sends every datagram waiting back to its source; none waiting, or a full ring, is fine. */
    private void echoAll(UdpSocket socket) {
        try {
            int length;
            while ((length = socket.receive(buffer(), 0, (int) buffer().byteSize())) >= 0) {
                if (!socket.sendTo(socket.lastSourceAddress(), socket.lastSourcePort(), buffer(), 0, length)) {
                    return;
                }
            }
        } catch (TernSocketException expected) {
            // An error the network reported (port unreachable, ...) is the application's business, not the replay's.
        }
    }

    /** {@code tcp-read-all}: reads every connection dry; errors the network reported are the application's business. */
    private void readAll() {
        for (TcpConnection connection : tcpConnections.values()) {
            try {
                while (connection.read(buffer(), 0, (int) buffer().byteSize()) > 0) {
                    // discard
                }
            } catch (TernSocketException expected) {
                // reset, timed out, or closed by the application: nothing to read
            }
        }
    }

    private IllegalStateException failed(ReplayScript.Action action, String why) {
        return new IllegalStateException(script.path() + " line " + action.line() + " (" + action.verb() + "): " + why);
    }

    private UdpSocket udp(ReplayScript.Action action) {
        final UdpSocket socket = udpSockets.get(action.intOption("sock"));
        if (socket == null) {
            throw failed(action, "no udp-open for sock=" + action.intOption("sock"));
        }
        return socket;
    }

    private TcpListener listener(ReplayScript.Action action) {
        final TcpListener listener = tcpListeners.get(action.intOption("lsn"));
        if (listener == null) {
            throw failed(action, "no tcp-listen for lsn=" + action.intOption("lsn"));
        }
        return listener;
    }

    private TcpConnection tcp(ReplayScript.Action action) {
        final TcpConnection connection = tcpConnections.get(action.intOption("conn"));
        if (connection == null) {
            throw failed(action, "no tcp-connect or tcp-accept for conn=" + action.intOption("conn"));
        }
        return connection;
    }

    /** A receive buffer for replayed reads (64 KiB, the largest UDP datagram fits). */
    private MemorySegment buffer() {
        if (buffer == null) {
            buffer = arena.allocate(65536);
        }
        return buffer;
    }

    /** The data the {@link Pinger} sends: byte i is {@code i & 0xFF}. */
    private MemorySegment pingPattern() {
        if (pingPattern == null) {
            pingPattern = arena.allocate(Pinger.MAX_DATA);
            for (int i = 0; i < Pinger.MAX_DATA; i++) {
                BigEndian.u8(pingPattern, i, i);
            }
        }
        return pingPattern;
    }

    /** The frames the stack transmitted. */
    public List<CapturedFrame> transmitted() {
        return link.transmittedFrames();
    }

    /** The frames the capture shows the recorded stack sending. */
    public List<CapturedFrame> recorded() {
        return capture.sentBy(script.start().mac());
    }

    /** Compares {@link #transmitted()} with {@link #recorded()}, both timed from the script's start. */
    public FrameComparison compare() {
        return FrameComparison.of(recorded(), script.start().atNs(), transmitted(), script.start().atNs());
    }

    @Override
    public void close() {
        stack.close();
        arena.close();
    }
}
