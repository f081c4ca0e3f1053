package dev.tern.stack.script;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.io.ByteRing;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv4.wire.Ipv4Repr;
import dev.tern.stack.NetStack;
import dev.tern.tcp.TcpError;
import dev.tern.tcp.TcpEvents;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.TcpState;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * Runs one packetdrill-format script against one Tern stack on virtual time. The script plays the remote host
 * (198.18.0.1: it injects {@code <} segments and expects Tern's {@code >} segments) and the application on Tern's
 * side (socket calls on Tern's 198.18.0.2). Time moves only when the script says so, stopping at every timer of the
 * stack on the way, so a run is deterministic and takes milliseconds whatever the script's span.
 *
 * <p>Semantics (docs/SCRIPTS.md has the full list): sequence numbers of {@code <} lines are relative to the remote's
 * ISN, of {@code >} lines to Tern's ISN, learned from Tern's first SYN; ACKs and SACK blocks to the other side's.
 * Tern listens (and {@code bind} binds) on port 8080, the remote connects from port 48000; Tern connects to port
 * 8080 and its port is learned from its SYN. A {@code >} line takes the oldest segment Tern sent and not yet matched;
 * a segment sent and never matched by the end fails the script. A relative time counts from when the previous line
 * happened (for a {@code >} line, when Tern sent the segment).
 *
 * <p>Owned by the calling thread; one run per instance.
 */
public final class ScriptRunner {
    public static final int TERN_ADDRESS = Ipv4Address.parse("198.18.0.2");
    public static final int REMOTE_ADDRESS = Ipv4Address.parse("198.18.0.1");
    /** The port {@code bind} gives and the port {@code connect} goes to (packetdrill's habit). */
    public static final int SCRIPT_PORT = 8080;
    /** The remote's port when it connects to Tern. */
    public static final int REMOTE_PORT = 48000;
    /** The remote's initial sequence number: script sequence 0 of {@code <} lines. */
    public static final long REMOTE_ISN = 3_000_000_000L;
    /** How long a blocking call may wait on virtual time before the script fails, naming it. */
    public static final long BLOCK_LIMIT_NS = 10_000_000_000L;
    /** How far a {@code >} line at any time ({@code *}) looks ahead. */
    public static final long ANY_TIME_LIMIT_NS = 600_000_000_000L;

    /** How far past a missed packet's time the runner looks, to say what Tern sent instead. */
    private static final long LOOK_AHEAD_NS = 10_000_000_000L;
    private static final long REMOTE_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final long TERN_MAC = MacAddress.parse("02:00:00:00:00:02");
    private static final long START_NS = 1_000_000_000_000L;
    private static final int O_RDWR = 2;
    private static final int O_NONBLOCK = 0x800;

    /** One segment Tern sent, as the remote saw it. */
    private record Sent(long atNs, TcpRepr tcp) {
    }

    /** A file descriptor of the script's application. */
    private static final class Fd {
        final int number;
        int listener = -1;
        int connection = -1;
        boolean bound;
        int flags = O_RDWR;
        int sendBuffer;
        int receiveBuffer;
        boolean noDelay;

        Fd(int number) {
            this.number = number;
        }

        boolean nonBlocking() {
            return (flags & O_NONBLOCK) != 0;
        }
    }

    /**
     * A blocking call in progress ({@code START...END call(...)}): {@code ready} is checked after every turn of the
     * stack (it may make progress itself, as a blocking write filling the buffer), {@code resume} gives the result.
     */
    private record Pending(ScriptLine.Call call, BooleanSupplier ready, java.util.function.Supplier<Result> resume,
                           String waitingFor, long returnNs) {
    }

    /** A call's outcome: a value, or -1 with an errno name. */
    private record Result(long value, String errno) {
        static Result ok(long value) {
            return new Result(value, null);
        }

        static Result fail(String errno) {
            return new Result(-1, errno);
        }

        /** The call blocks and spans time: its result comes later. */
        static final Result PENDING = new Result(Long.MIN_VALUE, "(pending)");

        @Override
        public String toString() {
            return errno == null ? Long.toString(value) : "-1 " + errno;
        }
    }

    private final ScriptProfile profile;
    private final String file;
    private final VirtualClock clock = new VirtualClock(START_NS);
    private final MemoryWire wire;
    private final MemoryLink remote;
    private final NetStack stack;
    private final TcpLayer tcp;
    private final TxFrame tx = new TxFrame();
    private final Deque<Sent> sent = new ArrayDeque<>();
    private final TreeMap<Integer, Fd> fds = new TreeMap<>();
    private final MemorySegment scratch = Arena.ofAuto().allocate(1 << 16);
    private long lastNs;
    private final ScriptFlow flow = new ScriptFlow();
    private java.io.PrintStream trace;
    /** The call now starting with a {@code START...END} time, if any. */
    private ScriptLine.Call spanning;
    /** A blocking call that spans time and has not returned yet. */
    private Pending pending;
    private boolean settling;

    private ScriptRunner(String file, ScriptProfile profile) {
        this.file = file;
        this.profile = profile;
        wire = MemoryWire.builder().clock(clock).mtu(profile.mtu()).build();
        remote = wire.attach("remote", REMOTE_MAC);
        remote.promiscuous(true);
        stack = NetStack.builder().name("script").link(wire.attach("tern", TERN_MAC)).address("198.18.0.2/24")
            .clock(clock).countersInMemory().tcp(profile.tcp()).build();
        tcp = stack.tcp();
        // The remote asks for Tern's address first, so Tern knows its MAC and sends segments without ARP.
        final byte[] arp = new byte[ArpPacket.LENGTH];
        new ArpPacket().wrap(MemorySegment.ofArray(arp), 0, arp.length).write(1, REMOTE_MAC, REMOTE_ADDRESS, 0,
            TERN_ADDRESS);
        inject(MacAddress.BROADCAST, EtherType.ARP, arp);
        poll();
        sent.clear();
    }

    /** Runs a script file; throws {@link ScriptException} on the first error or failure. */
    public static void run(Path path, ScriptProfile profile) throws IOException {
        run(path.toString(), Files.readString(path, StandardCharsets.UTF_8), profile);
    }

    /** Runs a script given as text; {@code file} names it in messages. */
    public static void run(String file, String text, ScriptProfile profile) {
        run(file, text, profile, null);
    }

    /**
     * Runs a script given as text; when {@code trace} is not null, every segment Tern sends is printed to it as it
     * goes, with its time, in the script's syntax (what {@code tern script --verbose} shows).
     */
    public static void run(String file, String text, ScriptProfile profile, java.io.PrintStream trace) {
        final List<ScriptLine> lines = ScriptParser.parse(file, text);
        final ScriptRunner runner = new ScriptRunner(file, profile);
        runner.trace = trace;
        try {
            runner.runAll(lines);
        } finally {
            runner.stack.close();
            runner.wire.close();
        }
    }

    private void runAll(List<ScriptLine> lines) {
        for (ScriptLine line : lines) {
            switch (line) {
                case ScriptLine.Packet p when !p.inbound() -> expect(p);
                case ScriptLine.Packet p -> {
                    waitUntil(line);
                    inject(p);
                    lastNs = now();
                }
                case ScriptLine.Call c -> {
                    waitUntil(line);
                    if (c.spansTime()) {
                        if (pending != null) {
                            throw failure(c.line(), "one blocking call at a time: " + pending.call.name() + " (line "
                                + pending.call.line() + ") has not returned yet");
                        }
                        spanning = c;
                    }
                    try {
                        call(c);
                    } finally {
                        spanning = null;
                    }
                    lastNs = now();
                }
            }
        }
        if (pending != null) {
            final Pending p = pending;
            advance(p.returnNs + profile.toleranceNs() + 1, () -> pending == null);
        }
        poll();
        final Sent extra = sent.peekFirst();
        if (extra != null) {
            final int last = lines.isEmpty() ? 0 : lines.getLast().line();
            throw failure(last, "Tern sent " + flow.describe(extra.tcp()) + " at " + seconds(extra.atNs)
                + " s, which no line of the script expects");
        }
    }

    // ------------------------------------------------------------------------------------------------ time

    private long now() {
        return clock.nanoTime() - START_NS;
    }

    private long start(ScriptLine.When when) {
        return when.startRelative() ? lastNs + when.startNs() : when.startNs();
    }

    private long end(ScriptLine.When when) {
        if (!when.isRange()) {
            return start(when);
        }
        return when.endRelative() ? lastNs + when.endNs() : when.endNs();
    }

    /** Moves virtual time to the line's time (a line may not go back in time beyond the tolerance). */
    private void waitUntil(ScriptLine line) {
        final long at = start(line.when());
        if (line.when().isRange()) {
            throw failure(line.line(), "a time range is only allowed for packets Tern sends (>)");
        }
        if (at < now() - profile.toleranceNs()) {
            throw failure(line.line(), "time goes backwards: this line is at " + seconds(at) + " s but the script is "
                + "already at " + seconds(now()) + " s");
        }
        advanceTo(at);
    }

    private void poll() {
        for (int round = 0; round < 100_000; round++) {
            final int work = stack.poll(clock.nanoTime());
            final int frames = collect();
            if (work == 0 && frames == 0) {
                settlePending();
                return;
            }
        }
        throw new IllegalStateException("the stack never went idle");
    }

    /** Advances to script time {@code target}, stopping at every timer and frame arrival; collects what Tern sends. */
    private void advanceTo(long target) {
        advance(target, () -> false);
    }

    /** Advances until {@code done} holds or script time {@code target} is reached; returns whether it held. */
    private boolean advance(long target, BooleanSupplier done) {
        poll();
        while (!done.getAsBoolean()) {
            final long nowNs = clock.nanoTime();
            if (nowNs - (START_NS + target) >= 0) {
                return false;
            }
            long next = Math.min(stack.pollAt(), wire.nextDeliveryNs());
            if (pending != null) {
                next = Math.min(next, START_NS + pending.returnNs + profile.toleranceNs() + 1);
            }
            if (next - nowNs <= 0) {
                next = nowNs + 1;
            }
            clock.advanceTo(Math.min(next, START_NS + target));
            poll();
        }
        return true;
    }

    /** Finishes a pending blocking call when it can return; fails the script when it is late or returns early. */
    private void settlePending() {
        if (pending == null || settling) {
            return;
        }
        settling = true;
        try {
            final Pending p = pending;
            final long tolerance = profile.toleranceNs();
            if (p.ready.getAsBoolean()) {
                pending = null;
                final Result result = p.resume.get();
                if (now() < p.returnNs - tolerance) {
                    throw failure(p.call.line(), p.call.name() + " returned " + result + " at " + seconds(now())
                        + " s, before the script's " + seconds(p.returnNs) + " s (tolerance "
                        + tolerance / 1_000_000 + " ms)");
                }
                check(p.call, result);
            } else if (now() > p.returnNs + tolerance) {
                pending = null;
                throw failure(p.call.line(), "the blocking call " + p.call.name() + "(" + String.join(", ",
                    p.call.args()) + ") had not returned at " + seconds(now()) + " s, after the script's "
                    + seconds(p.returnNs) + " s (waiting for " + p.waitingFor + ")");
            }
        } finally {
            settling = false;
        }
    }

    private static String seconds(long ns) {
        return String.format(Locale.ROOT, "%.6f", ns / 1e9);
    }

    // -------------------------------------------------------------------------------------- Tern's segments

    private int collect() {
        final int[] count = {0};
        final List<byte[]> arpReplies = new ArrayList<>();
        remote.receive((segment, offset, length, flags) -> {
            if (length < EthernetHeader.LENGTH) {
                return;
            }
            final int etherType = BigEndian.u16(segment, offset + 12);
            count[0]++;
            if (etherType == EtherType.ARP && length >= EthernetHeader.LENGTH + ArpPacket.LENGTH) {
                // The remote answers ARP for its address, as a real host would; the script never sees ARP.
                final ArpPacket arp = new ArpPacket().wrap(segment, offset + EthernetHeader.LENGTH, ArpPacket.LENGTH);
                if (arp.operation() == 1 && arp.targetIp() == REMOTE_ADDRESS) {
                    final byte[] reply = new byte[ArpPacket.LENGTH];
                    new ArpPacket().wrap(MemorySegment.ofArray(reply), 0, reply.length)
                        .write(2, REMOTE_MAC, REMOTE_ADDRESS, arp.senderMac(), arp.senderIp());
                    arpReplies.add(reply);
                }
                return;
            }
            if (etherType != EtherType.IPV4 || length < EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH) {
                return;
            }
            final Ipv4Header ip = new Ipv4Header().wrap(segment, offset + EthernetHeader.LENGTH,
                length - EthernetHeader.LENGTH);
            // Only TCP is scripted; ICMP and IGMP from Tern are not checked (docs/SCRIPTS.md).
            if (ip.check(true) != Ipv4Header.OK || ip.protocol() != IpProtocol.TCP
                || ip.destination() != REMOTE_ADDRESS) {
                return;
            }
            final int tcpLength = ip.totalLength() - ip.headerLength();
            final long at = offset + EthernetHeader.LENGTH + ip.headerLength();
            final TcpHeader header = new TcpHeader().wrap(segment, at, tcpLength);
            if (header.check() != TcpHeader.OK) {
                throw new ScriptException(file, 0, "Tern sent a malformed TCP header (a bug in Tern)");
            }
            if (!InternetChecksum.verifies(InternetChecksum.add(InternetChecksum.pseudoHeader(ip.source(),
                ip.destination(), IpProtocol.TCP, tcpLength), segment, at, tcpLength))) {
                throw new ScriptException(file, 0, "Tern sent a TCP segment with a bad checksum (a bug in Tern)");
            }
            final Sent s = new Sent(now(), TcpRepr.parse(header, tcpLength));
            sent.add(s);
            if (trace != null) {
                trace.println(seconds(s.atNs) + " > " + flow.describe(s.tcp()));
            }
        }, 100_000);
        for (byte[] reply : arpReplies) {
            inject(TERN_MAC, EtherType.ARP, reply);
        }
        return count[0];
    }

    private void expect(ScriptLine.Packet p) {
        final ScriptLine.When when = p.when();
        final long lo = when.any() ? 0 : start(when);
        final long hi = when.any() ? now() + ANY_TIME_LIMIT_NS : end(when);
        final long tolerance = when.any() ? 0 : profile.toleranceNs();
        if (!advance(hi + tolerance, () -> !sent.isEmpty())) {
            final String expected = "expected Tern to send '" + packetText(p) + "'"
                + (when.any() ? "" : " at " + timeText(lo, hi)) + ", but Tern sent nothing by " + seconds(now()) + " s";
            // Look a little further, so the message can say what Tern did instead.
            if (!when.any() && advance(now() + LOOK_AHEAD_NS, () -> !sent.isEmpty())) {
                throw failure(p.line(), expected + "; it sent " + flow.describe(sent.peekFirst().tcp()) + " at "
                    + seconds(sent.peekFirst().atNs) + " s");
            }
            throw failure(p.line(), expected);
        }
        final Sent s = sent.pollFirst();
        if (!when.any() && (s.atNs < lo - tolerance || s.atNs > hi + tolerance)) {
            throw failure(p.line(), "expected '" + packetText(p) + "' at " + timeText(lo, hi) + " (tolerance "
                + profile.toleranceNs() / 1_000_000 + " ms); Tern sent " + flow.describe(s.tcp()) + " at " + seconds(s.atNs) + " s");
        }
        final String mismatch = flow.mismatch(p, s.tcp());
        if (mismatch != null) {
            throw failure(p.line(), "expected '" + packetText(p) + "'; Tern sent " + flow.describe(s.tcp()) + " at "
                + seconds(s.atNs) + " s: " + mismatch);
        }
        lastNs = s.atNs;
    }

    private String timeText(long lo, long hi) {
        return lo == hi ? seconds(lo) + " s" : seconds(lo) + "~" + seconds(hi) + " s";
    }

    private static String packetText(ScriptLine.Packet p) {
        final String text = p.text().strip();
        final int arrow = text.indexOf('>');
        return arrow < 0 ? text : text.substring(arrow + 1).strip();
    }

    // ------------------------------------------------------------------------------------ the remote's segments

    private void inject(ScriptLine.Packet p) {
        // Before Tern sent a SYN its ISN is unknown: ACK numbers and SACK blocks are then the wire's (a script
        // about segments to a closed port needs no more).
        final byte[] options = flow.optionBytes(p);
        final int headerLength = TcpHeader.MIN_LENGTH + options.length;
        if (headerLength > 60) {
            throw failure(p.line(), "the options take " + options.length + " bytes, more than TCP's 40");
        }
        final int tcpLength = headerLength + p.payloadLength();
        final byte[] segment = new byte[tcpLength];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, tcpLength);
        final long isn = flow.ternIsn < 0 ? 0 : flow.ternIsn;
        header.write(flow.remotePort, flow.ternPort, (int) (REMOTE_ISN + p.seqStart()), p.ack() < 0 ? 0 : (int) (isn + p.ack()),
            headerLength, p.flags(), p.window() < 0 ? 65535 : p.window());
        for (int i = 0; i < options.length; i++) {
            header.optionByte(i, options[i] & 0xFF);
        }
        // The payload is zeros; its bytes are not part of what a script checks.
        TcpRepr.fillChecksum(header, REMOTE_ADDRESS, TERN_ADDRESS, tcpLength);
        final byte[] packet = new byte[Ipv4Header.MIN_LENGTH + tcpLength];
        new Ipv4Repr(REMOTE_ADDRESS, TERN_ADDRESS, IpProtocol.TCP, 64, 0, 0, 0x4000, tcpLength)
            .emit(new Ipv4Header().wrap(MemorySegment.ofArray(packet), 0, packet.length));
        System.arraycopy(segment, 0, packet, Ipv4Header.MIN_LENGTH, tcpLength);
        inject(TERN_MAC, EtherType.IPV4, packet);
        poll();
    }

    private void inject(long destinationMac, int etherType, byte[] payload) {
        if (!remote.claim(tx)) {
            throw new IllegalStateException("the memory wire ran out of buffers");
        }
        final int length = Math.max(EthernetHeader.MIN_FRAME_LENGTH, EthernetHeader.LENGTH + payload.length);
        new EthernetHeader().wrap(tx.segment(), tx.offset(), length).destination(destinationMac).source(REMOTE_MAC)
            .etherType(etherType);
        MemorySegment.copy(payload, 0, tx.segment(), ValueLayout.JAVA_BYTE, tx.offset() + EthernetHeader.LENGTH,
            payload.length);
        BigEndian.zero(tx.segment(), tx.offset() + EthernetHeader.LENGTH + payload.length,
            length - EthernetHeader.LENGTH - payload.length);
        tx.length(length);
        remote.commit(tx);
        remote.flush();
    }

    // ------------------------------------------------------------------------------------------- socket calls

    private void call(ScriptLine.Call c) {
        final Result result = switch (c.name()) {
            case "socket" -> socket(c);
            case "setsockopt" -> setsockopt(c);
            case "getsockopt" -> getsockopt(c);
            case "bind" -> bind(c);
            case "listen" -> listen(c);
            case "accept" -> accept(c);
            case "connect" -> connect(c);
            case "write", "send" -> write(c);
            case "read", "recv" -> read(c);
            case "close" -> close(c);
            case "shutdown" -> shutdown(c);
            case "fcntl" -> fcntl(c);
            case "poll" -> poll(c);
            default -> throw failure(c.line(), "the call '" + c.name() + "' is not supported (supported: socket, "
                + "setsockopt, getsockopt, bind, listen, accept, connect, write, send, read, recv, close, shutdown, "
                + "fcntl, poll)");
        };
        if (result == Result.PENDING) {
            poll();
            return;
        }
        if (c.spansTime()) {
            final long returnNs = c.returnRelative() ? now() + c.returnNs() : c.returnNs();
            if (now() < returnNs - profile.toleranceNs()) {
                throw failure(c.line(), c.name() + " returned " + result + " at once, at " + seconds(now())
                    + " s; the script says it blocks until " + seconds(returnNs) + " s");
            }
        }
        check(c, result);
        poll();
    }

    private void check(ScriptLine.Call c, Result result) {
        final Result expected = new Result(c.result(), c.errno());
        if (!result.equals(expected)) {
            throw failure(c.line(), c.name() + " returned " + result + ", the script expects " + expected);
        }
    }

    /**
     * A blocking call waits for {@code ready}, then {@code resume} gives its result. In a call that spans time
     * ({@code START...END}) the script goes on meanwhile and the result is checked when the call returns; otherwise
     * virtual time runs until it is ready (or the script fails, naming the call).
     */
    private Result blockThen(ScriptLine.Call c, BooleanSupplier ready, String waitingFor,
                             java.util.function.Supplier<Result> resume) {
        if (spanning == c) {
            if (ready.getAsBoolean()) {
                return resume.get();
            }
            final long returnNs = c.returnRelative() ? now() + c.returnNs() : c.returnNs();
            pending = new Pending(c, ready, resume, waitingFor, returnNs);
            return Result.PENDING;
        }
        block(c, ready, waitingFor);
        return resume.get();
    }

    private void arguments(ScriptLine.Call c, int... counts) {
        for (int count : counts) {
            if (c.args().size() == count) {
                return;
            }
        }
        throw failure(c.line(), c.name() + " takes " + counts[0] + " arguments, not " + c.args().size());
    }

    private Fd fd(ScriptLine.Call c) {
        final Fd fd = fds.get((int) number(c, 0));
        if (fd == null) {
            throw failure(c.line(), c.name() + " on file descriptor " + c.args().getFirst()
                + ", which the script has not opened");
        }
        return fd;
    }

    private long number(ScriptLine.Call c, int index) {
        String text = c.args().get(index);
        if (text.startsWith("[") && text.endsWith("]")) {
            text = text.substring(1, text.length() - 1).strip();
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw failure(c.line(), "argument " + (index + 1) + " of " + c.name() + " should be a number, not '"
                + c.args().get(index) + "'");
        }
    }

    private Result socket(ScriptLine.Call c) {
        arguments(c, 3);
        final String type = c.args().get(1).replace(" ", "");
        final String protocol = c.args().get(2);
        final boolean nonBlocking = type.equals("SOCK_STREAM|SOCK_NONBLOCK") || type.equals("SOCK_NONBLOCK|SOCK_STREAM");
        if (!(type.equals("SOCK_STREAM") || nonBlocking) || !(protocol.equals("IPPROTO_TCP") || protocol.equals("0"))) {
            throw failure(c.line(), "only TCP sockets are supported: socket(..., SOCK_STREAM, IPPROTO_TCP)");
        }
        if (!c.args().getFirst().equals("...") && !c.args().getFirst().equals("AF_INET")) {
            throw failure(c.line(), "only AF_INET (or ...) sockets are supported");
        }
        final Fd fd = open();
        if (nonBlocking) {
            fd.flags |= O_NONBLOCK;
        }
        return Result.ok(fd.number);
    }

    /** The lowest free descriptor from 3, as a Unix process gets. */
    private Fd open() {
        int number = 3;
        while (fds.containsKey(number)) {
            number++;
        }
        final Fd fd = new Fd(number);
        fds.put(number, fd);
        return fd;
    }

    private TcpOptions options(Fd fd) {
        TcpOptions options = TcpOptions.DEFAULT.withNoDelay(fd.noDelay);
        if (fd.sendBuffer > 0 || fd.receiveBuffer > 0) {
            options = options.withBuffers(fd.sendBuffer, fd.receiveBuffer);
        }
        return options;
    }

    private Result setsockopt(ScriptLine.Call c) {
        arguments(c, 5);
        final Fd fd = fd(c);
        final String option = c.args().get(1) + " " + c.args().get(2);
        final long value = number(c, 3);
        switch (option) {
            case "SOL_SOCKET SO_REUSEADDR", "SOL_SOCKET SO_REUSEPORT" -> {
                // Tern's listeners never conflict with TIME-WAIT connections; nothing to set.
            }
            case "SOL_SOCKET SO_SNDBUF" -> fd.sendBuffer = buffer(c, value);
            case "SOL_SOCKET SO_RCVBUF" -> fd.receiveBuffer = buffer(c, value);
            case "IPPROTO_TCP TCP_NODELAY" -> {
                fd.noDelay = value != 0;
                if (fd.connection >= 0) {
                    tcp.noDelay(fd.connection, fd.noDelay, clock.nanoTime());
                }
            }
            default -> throw failure(c.line(), "setsockopt " + option + " is not supported (supported: "
                + "SO_REUSEADDR, SO_REUSEPORT, SO_SNDBUF, SO_RCVBUF, TCP_NODELAY)");
        }
        return Result.ok(0);
    }

    /** Tern's buffers are powers of two from 1 KiB: the size asked for is rounded up (docs/SCRIPTS.md). */
    private int buffer(ScriptLine.Call c, long value) {
        if (value < 1 || value > (1 << 30)) {
            throw failure(c.line(), "a buffer of " + value + " bytes is out of Tern's range (1 KiB .. 1 GiB)");
        }
        return Math.max(1024, roundUp((int) value));
    }

    private static int roundUp(int value) {
        final int high = Integer.highestOneBit(value);
        return high == value ? value : high << 1;
    }

    private Result getsockopt(ScriptLine.Call c) {
        arguments(c, 5);
        final Fd fd = fd(c);
        final String option = c.args().get(1) + " " + c.args().get(2);
        final String expected = c.args().get(3);
        final String actual = switch (option) {
            case "SOL_SOCKET SO_ERROR" -> {
                final int error = fd.connection < 0 ? TcpError.NONE : tcp.error(fd.connection);
                yield error == TcpError.NONE ? "0" : errno(error);
            }
            case "IPPROTO_TCP TCP_NODELAY" -> fd.noDelay ? "1" : "0";
            default -> throw failure(c.line(), "getsockopt " + option + " is not supported (supported: SO_ERROR, "
                + "TCP_NODELAY)");
        };
        final String want = expected.startsWith("[") && expected.endsWith("]")
            ? expected.substring(1, expected.length() - 1).strip() : expected;
        if (!want.equals(actual)) {
            throw failure(c.line(), "getsockopt " + option + " gave [" + actual + "], the script expects " + expected);
        }
        return Result.ok(0);
    }

    private Result bind(ScriptLine.Call c) {
        arguments(c, 3);
        fd(c).bound = true;
        return Result.ok(0);
    }

    private Result listen(ScriptLine.Call c) {
        arguments(c, 2);
        final Fd fd = fd(c);
        if (!fd.bound) {
            throw failure(c.line(), "listen on a socket that is not bound: Tern picks no port by itself; bind first");
        }
        final int listener = tcp.listen(SCRIPT_PORT, (int) Math.max(1, number(c, 1)), options(fd), TcpEvents.NONE);
        if (listener < 0) {
            return Result.fail(errno(-listener));
        }
        fd.listener = listener;
        return Result.ok(0);
    }

    private Result accept(ScriptLine.Call c) {
        arguments(c, 3);
        final Fd fd = fd(c);
        if (fd.listener < 0) {
            return Result.fail("EINVAL");
        }
        if (tcp.acceptable(fd.listener) == 0) {
            if (fd.nonBlocking()) {
                return Result.fail("EAGAIN");
            }
            return blockThen(c, () -> tcp.acceptable(fd.listener) > 0, "a connection to accept",
                () -> acceptNow(fd));
        }
        return acceptNow(fd);
    }

    private Result acceptNow(Fd fd) {
        final int connection = tcp.accept(fd.listener);
        if (connection < 0) {
            return Result.fail(errno(-connection));
        }
        final Fd accepted = open();
        accepted.connection = connection;
        accepted.noDelay = fd.noDelay;
        if (fd.noDelay) {
            tcp.noDelay(connection, true, clock.nanoTime());
        }
        return Result.ok(accepted.number);
    }

    private Result connect(ScriptLine.Call c) {
        arguments(c, 3);
        final Fd fd = fd(c);
        if (fd.connection >= 0) {
            final int state = tcp.state(fd.connection);
            if (state == TcpState.SYN_SENT) {
                return Result.fail("EALREADY");
            }
            final int error = tcp.error(fd.connection);
            return error != TcpError.NONE ? Result.fail(errno(error)) : Result.fail("EISCONN");
        }
        final int connection = tcp.connect(REMOTE_ADDRESS, SCRIPT_PORT, 0, options(fd), TcpEvents.NONE,
            clock.nanoTime());
        if (connection < 0) {
            return Result.fail(errno(-connection));
        }
        fd.connection = connection;
        flow.restart();
        poll();
        if (fd.nonBlocking()) {
            return Result.fail("EINPROGRESS");
        }
        return blockThen(c, () -> tcp.state(connection) != TcpState.SYN_SENT, "the handshake to complete", () -> {
            final int error = tcp.error(connection);
            return error == TcpError.NONE ? Result.ok(0) : Result.fail(errno(error));
        });
    }

    private Result write(ScriptLine.Call c) {
        arguments(c, 3, 4);
        if (c.args().size() == 4 && number(c, 3) != 0) {
            throw failure(c.line(), "send flags are not supported (only 0)");
        }
        final Fd fd = fd(c);
        final int length = (int) number(c, 2);
        if (fd.connection < 0) {
            return Result.fail(fd.listener >= 0 ? "ENOTCONN" : "EPIPE");
        }
        final int connection = fd.connection;
        final Result broken = writeError(connection);
        if (broken != null) {
            return broken;
        }
        if (fd.nonBlocking()) {
            final int written = fill(connection, length);
            return written == 0 && length > 0 ? Result.fail("EAGAIN") : Result.ok(written);
        }
        // A blocking write returns when every byte is in the send buffer (or the connection failed), as Linux's.
        final int[] written = {0};
        final BooleanSupplier done = () -> {
            if (writeError(connection) != null) {
                return true;
            }
            written[0] += fill(connection, length - written[0]);
            return written[0] == length;
        };
        return blockThen(c, done, "room in the send buffer for all " + length + " bytes", () -> {
            final Result error = writeError(connection);
            return error != null && written[0] == 0 ? error : Result.ok(written[0]);
        });
    }

    /** Writes up to {@code length} bytes of a pattern into the send buffer and tells the stack; returns how many. */
    private int fill(int connection, int length) {
        final ByteRing ring = tcp.sendBuffer(connection);
        if (ring == null || length == 0) {
            return 0;
        }
        int written = 0;
        while (written < length && ring.freeSpace() > 0) {
            final int chunk = Math.min(Math.min(length - written, ring.freeSpace()), (int) scratch.byteSize());
            for (int i = 0; i < chunk; i++) {
                scratch.set(ValueLayout.JAVA_BYTE, i, (byte) ('a' + (written + i) % 26));
            }
            written += ring.write(scratch, 0, chunk);
        }
        if (written > 0) {
            tcp.sendable(connection, clock.nanoTime());
        }
        return written;
    }

    private Result writeError(int connection) {
        final int error = tcp.error(connection);
        if (error != TcpError.NONE) {
            return Result.fail(errno(error));
        }
        final int state = tcp.state(connection);
        if (state == TcpState.SYN_SENT || state == TcpState.SYN_RECEIVED) {
            return null;
        }
        return TcpState.canSend(state) ? null : Result.fail("EPIPE");
    }

    private Result read(ScriptLine.Call c) {
        arguments(c, 3, 4);
        if (c.args().size() == 4 && number(c, 3) != 0) {
            throw failure(c.line(), "recv flags are not supported (only 0)");
        }
        final Fd fd = fd(c);
        final int length = (int) number(c, 2);
        if (fd.connection < 0) {
            return Result.fail("ENOTCONN");
        }
        final int connection = fd.connection;
        if (!readReady(connection)) {
            if (fd.nonBlocking()) {
                return Result.fail("EAGAIN");
            }
            return blockThen(c, () -> readReady(connection), "data to read", () -> readNow(connection, length));
        }
        return readNow(connection, length);
    }

    private Result readNow(int connection, int length) {
        final ByteRing ring = tcp.receiveBuffer(connection);
        final int available = ring == null ? 0 : ring.available();
        if (available == 0) {
            final int error = tcp.error(connection);
            return error == TcpError.NONE ? Result.ok(0) : Result.fail(errno(error));
        }
        int read = 0;
        while (read < length && ring.available() > 0) {
            read += ring.read(scratch, 0, Math.min(length - read, (int) scratch.byteSize()));
        }
        tcp.consumed(connection, clock.nanoTime());
        return Result.ok(read);
    }

    private boolean readReady(int connection) {
        final ByteRing ring = tcp.receiveBuffer(connection);
        return (ring != null && ring.available() > 0) || tcp.receiveShutdown(connection)
            || tcp.error(connection) != TcpError.NONE;
    }

    private Result close(ScriptLine.Call c) {
        arguments(c, 1);
        final Fd fd = fd(c);
        if (fd.connection >= 0) {
            tcp.close(fd.connection, clock.nanoTime());
        }
        if (fd.listener >= 0) {
            tcp.closeListener(fd.listener, clock.nanoTime());
        }
        fds.remove(fd.number);
        return Result.ok(0);
    }

    private Result shutdown(ScriptLine.Call c) {
        arguments(c, 2);
        final Fd fd = fd(c);
        final String how = c.args().get(1);
        if (!how.equals("SHUT_WR") && !how.equals("SHUT_RDWR")) {
            throw failure(c.line(), "shutdown(" + how + ") is not supported: Tern has no receive-side shutdown, "
                + "only SHUT_WR (and SHUT_RDWR, taken as SHUT_WR)");
        }
        if (fd.connection < 0) {
            return Result.fail("ENOTCONN");
        }
        tcp.shutdownOutput(fd.connection, clock.nanoTime());
        return Result.ok(0);
    }

    private Result fcntl(ScriptLine.Call c) {
        final Fd fd = fd(c);
        final String command = c.args().size() > 1 ? c.args().get(1) : "";
        if (command.equals("F_GETFL") && c.args().size() == 2) {
            return Result.ok(fd.flags);
        }
        if (command.equals("F_SETFL") && c.args().size() == 3) {
            int flags = 0;
            for (String name : c.args().get(2).split("\\|")) {
                flags |= switch (name.strip()) {
                    case "O_RDWR" -> O_RDWR;
                    case "O_NONBLOCK" -> O_NONBLOCK;
                    case "0" -> 0;
                    default -> throw failure(c.line(), "fcntl flag '" + name.strip() + "' is not supported (O_RDWR, "
                        + "O_NONBLOCK)");
                };
            }
            fd.flags = flags;
            return Result.ok(0);
        }
        throw failure(c.line(), "only fcntl(fd, F_GETFL) and fcntl(fd, F_SETFL, flags) are supported");
    }

    private static final int POLLIN = 0x1;
    private static final int POLLOUT = 0x4;
    private static final int POLLERR = 0x8;
    private static final int POLLHUP = 0x10;

    /** {@code poll([{fd=4, events=POLLIN, revents=POLLIN}], 1, 0)}: one descriptor, waiting up to the timeout. */
    private Result poll(ScriptLine.Call c) {
        arguments(c, 3);
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
            "\\[\\s*\\{\\s*fd\\s*=\\s*(\\d+)\\s*,\\s*events\\s*=\\s*([A-Z|\\s]+|0)\\s*(?:,\\s*revents\\s*=\\s*([A-Z|\\s]+|0)"
                + "\\s*)?}\\s*]").matcher(c.args().getFirst());
        if (!m.matches() || number(c, 1) != 1) {
            throw failure(c.line(), "poll supports one descriptor: poll([{fd=N, events=..., revents=...}], 1, ms)");
        }
        final Fd fd = fds.get(Integer.parseInt(m.group(1)));
        if (fd == null) {
            throw failure(c.line(), "poll on file descriptor " + m.group(1) + ", which the script has not opened");
        }
        final int events = pollBits(c, m.group(2));
        final long timeoutMs = number(c, 2);
        final long deadline = timeoutMs < 0 ? now() + BLOCK_LIMIT_NS : now() + timeoutMs * 1_000_000L;
        if (timeoutMs != 0) {
            final boolean ready = advance(deadline, () -> (revents(fd) & (events | POLLERR | POLLHUP)) != 0);
            if (!ready && timeoutMs < 0) {
                throw failure(c.line(), "poll blocked and did not return within " + BLOCK_LIMIT_NS / 1_000_000_000L
                    + " s of virtual time");
            }
        }
        final int revents = revents(fd) & (events | POLLERR | POLLHUP);
        if (m.group(3) != null) {
            final int expected = pollBits(c, m.group(3));
            if (expected != revents) {
                throw failure(c.line(), "poll gave revents " + pollNames(revents) + ", the script expects "
                    + pollNames(expected));
            }
        }
        return Result.ok(revents == 0 ? 0 : 1);
    }

    private int revents(Fd fd) {
        int bits = 0;
        if (fd.listener >= 0) {
            return tcp.acceptable(fd.listener) > 0 ? POLLIN : 0;
        }
        if (fd.connection < 0) {
            return POLLOUT | POLLHUP;
        }
        final int c = fd.connection;
        final int state = tcp.state(c);
        if (tcp.error(c) != TcpError.NONE) {
            bits |= POLLERR | POLLHUP | POLLIN | POLLOUT;
        }
        if (state != TcpState.SYN_SENT && readReady(c)) {
            bits |= POLLIN;
        }
        final ByteRing ring = tcp.sendBuffer(c);
        if (TcpState.canSend(state) && ring != null && ring.freeSpace() > 0) {
            bits |= POLLOUT;
        }
        return bits;
    }

    private int pollBits(ScriptLine.Call c, String text) {
        int bits = 0;
        for (String name : text.split("\\|")) {
            bits |= switch (name.strip()) {
                case "POLLIN" -> POLLIN;
                case "POLLOUT" -> POLLOUT;
                case "POLLERR" -> POLLERR;
                case "POLLHUP" -> POLLHUP;
                case "0" -> 0;
                default -> throw failure(c.line(), "poll event '" + name.strip() + "' is not supported (POLLIN, "
                    + "POLLOUT, POLLERR, POLLHUP)");
            };
        }
        return bits;
    }

    private static String pollNames(int bits) {
        final List<String> names = new ArrayList<>();
        if ((bits & POLLIN) != 0) {
            names.add("POLLIN");
        }
        if ((bits & POLLOUT) != 0) {
            names.add("POLLOUT");
        }
        if ((bits & POLLERR) != 0) {
            names.add("POLLERR");
        }
        if ((bits & POLLHUP) != 0) {
            names.add("POLLHUP");
        }
        return names.isEmpty() ? "0" : String.join("|", names);
    }

    /** A blocking call waits on virtual time for {@code ready}; a call that never returns fails the script. */
    private void block(ScriptLine.Call c, BooleanSupplier ready, String waitingFor) {
        if (!advance(now() + BLOCK_LIMIT_NS, ready)) {
            throw failure(c.line(), "the blocking call " + c.name() + "(" + String.join(", ", c.args())
                + ") did not return within " + BLOCK_LIMIT_NS / 1_000_000_000L + " s of virtual time (waiting for "
                + waitingFor + "); a script cannot answer a blocked call: use fcntl O_NONBLOCK and poll");
        }
    }

    private static String errno(int tcpError) {
        return switch (tcpError) {
            case TcpError.REFUSED -> "ECONNREFUSED";
            case TcpError.RESET -> "ECONNRESET";
            case TcpError.TIMED_OUT -> "ETIMEDOUT";
            case TcpError.HOST_UNREACHABLE -> "EHOSTUNREACH";
            case TcpError.NET_UNREACHABLE -> "ENETUNREACH";
            case TcpError.ADDRESS_IN_USE -> "EADDRINUSE";
            case TcpError.NO_BUFFER -> "ENOBUFS";
            case TcpError.TOO_MANY_CONNECTIONS -> "EMFILE";
            case TcpError.ADDRESS_NOT_AVAILABLE -> "EADDRNOTAVAIL";
            case TcpError.ABORTED -> "ECONNABORTED";
            default -> "EINVAL";
        };
    }

    private ScriptException failure(int line, String message) {
        return new ScriptException(file, line, message);
    }
}
