package dev.tern.stack.script;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.core.checksum.InternetChecksum;
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
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;

import java.io.IOException;
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
 * <p>This class owns time, the wire and the order of lines; {@link ScriptFlow} holds the script's numbering (compares,
 * prints and writes segments) and {@link ScriptSockets} the application's descriptors and calls.
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

    /** One segment Tern sent, as the remote saw it. */
    private record Sent(long atNs, TcpRepr tcp) {
    }

    /**
     * A blocking call in progress ({@code START...END call(...)}): {@code ready} is checked after every turn of the
     * stack (it may make progress itself, as a blocking write filling the buffer), {@code resume} gives the result.
     */
    private record Pending(ScriptLine.Call call, BooleanSupplier ready, java.util.function.Supplier<Result> resume,
                           String waitingFor, long returnNs) {
    }

    /** A call's outcome: a value, or -1 with an errno name. */
    record Result(long value, String errno) {
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
    private final TxFrame tx = new TxFrame();
    private final Deque<Sent> sent = new ArrayDeque<>();
    private final ScriptSockets sockets;
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
        sockets = new ScriptSockets(this, stack.tcp(), flow);
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

    /** The stack's clock, for calls into the TCP layer. */
    long nowNs() {
        return clock.nanoTime();
    }

    /** Script time: nanoseconds since the script's 0. */
    long now() {
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

    void poll() {
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
    boolean advance(long target, BooleanSupplier done) {
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

    static String seconds(long ns) {
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
        final Result result = sockets.call(c);
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
    Result blockThen(ScriptLine.Call c, BooleanSupplier ready, String waitingFor,
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

    /** A blocking call waits on virtual time for {@code ready}; a call that never returns fails the script. */
    private void block(ScriptLine.Call c, BooleanSupplier ready, String waitingFor) {
        if (!advance(now() + BLOCK_LIMIT_NS, ready)) {
            throw failure(c.line(), "the blocking call " + c.name() + "(" + String.join(", ", c.args())
                + ") did not return within " + BLOCK_LIMIT_NS / 1_000_000_000L + " s of virtual time (waiting for "
                + waitingFor + "); a script cannot answer a blocked call: use fcntl O_NONBLOCK and poll");
        }
    }

    ScriptException failure(int line, String message) {
        return new ScriptException(file, line, message);
    }
}
