package dev.tern.script;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv4.wire.Ipv4Repr;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.Ipv6Header;
import dev.tern.ipv6.wire.NextHeader;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.stack.NetStack;
import dev.tern.tcp.FastOpenKeys;
import dev.tern.tcp.wire.TcpFlags;
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
import java.util.function.LongToIntFunction;

/**
 * Runs one packetdrill-format script against one Tern stack on virtual time. The script plays the remote host
 * (198.18.0.1 unless its option lines say otherwise, {@link ScriptAddresses}: it injects {@code <} packets, TCP, UDP
 * or ICMP, and expects Tern's {@code >} packets) and the application on Tern's side (socket calls on Tern's
 * 198.18.0.2). Time moves only when the script says so, stopping
 * at every timer of the stack on the way, so a run is deterministic and takes milliseconds whatever the script's span.
 *
 * <p>Semantics (docs/SCRIPTS.md has the full list): a script may hold several TCP connections, each a
 * {@link ScriptFlow} named by its ports; a {@code <} line goes to the flow its ports name, else to the current flow
 * (the last one named or created). Sequence numbers of {@code <} lines are relative to the remote's ISN, of {@code >}
 * lines to Tern's ISN on that flow, learned from Tern's first SYN on it; ACKs and SACK blocks to the other side's.
 * Tern listens (and {@code bind} binds) on port 8080, the remote connects from port 48000 unless a line names
 * another; Tern connects to port 8080 from an ephemeral port. A {@code >} line takes the oldest packet Tern sent and
 * not yet matched, whatever its flow; a packet sent and never matched by the end fails the script. A relative time
 * counts from when the previous line happened (for a {@code >} line, when Tern sent the packet). Blocking calls
 * written {@code START...END} may be pending several at once.
 *
 * <p>This class owns time, the wire, the flows and the order of lines; {@link ScriptFlow} holds one connection's
 * numbering (compares, prints and writes segments) and {@link ScriptSockets} the application's descriptors and calls.
 *
 * <p>Owned by the calling thread; one run per instance.
 */
public final class ScriptRunner {
    /** Tern's address when a script's option lines name none ({@link ScriptAddresses}). */
    public static final int TERN_ADDRESS = ScriptAddresses.DEFAULT.tern();
    /** The remote's address when a script's option lines name none. */
    public static final int REMOTE_ADDRESS = ScriptAddresses.DEFAULT.remote();
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

    /**
     * One packet Tern sent, as the remote saw it: a TCP segment (with the flow its ports name), a UDP datagram or an
     * ICMP message; the other two fields are null.
     */
    /** A packet Tern sent, with its IP header's TOS byte (IPv6's traffic class), TTL (hop limit) and flow label. */
    private record Sent(long atNs, TcpRepr tcp, ScriptFlow flow, UdpSeen udp, IcmpSeen icmp, byte[] data, int tos,
                        int ttl, int flowLabel) {
    }

    /** A UDP datagram Tern sent: its ports and payload length. */
    private record UdpSeen(int sourcePort, int destinationPort, int length) {
    }

    /**
     * An ICMP message Tern sent: its type, code, next-hop MTU and identifier fields (the last two as the wire has
     * them, whatever the type; over IPv6 the MTU is the second word, Packet Too Big's), its length with the header,
     * and what it quotes: the quoted packet's protocol, ports, TCP sequence number (on the wire) and UDP payload
     * length (-1 where they do not apply or were not quoted).
     */
    private record IcmpSeen(int type, int code, long mtu, int identifier, int length, int quotedProtocol,
                            int quotedSourcePort, int quotedDestinationPort, long quotedSeq, int quotedUdpLength) {
    }

    /**
     * A blocking call in progress ({@code START...END call(...)}): {@code ready} is checked after every turn of the
     * stack (it may make progress itself, as a blocking write filling the buffer), {@code resume} gives the result.
     */
    private record Pending(ScriptLine.Call call, BooleanSupplier ready, java.util.function.Supplier<Result> resume,
                           String waitingFor, long returnNs, long wakeNs, long toleranceNs) {
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

    /** The script's profile; a setting applied while the script runs changes its TCP configuration (live). */
    private ScriptProfile profile;
    /** The settings applied at their line's time, each with the profile from then on (ScriptSettings). */
    private java.util.Map<ScriptLine.Sysctl, ScriptProfile> liveSettings = java.util.Map.of();
    private final String file;
    /** Tern's address and the remote's on the wire: the runner's, or the script's option lines'. */
    private final int ternAddress;
    private final int remoteAddress;
    private final VirtualClock clock = new VirtualClock(START_NS);
    private final MemoryWire wire;
    private final MemoryLink remote;
    private final NetStack stack;
    private final TxFrame tx = new TxFrame();
    private final Deque<Sent> sent = new ArrayDeque<>();
    private final ScriptSockets sockets;
    private long lastNs;
    /** Every TCP connection the script has talked about, in the order they appeared. */
    private final List<ScriptFlow> flows = new ArrayList<>();
    /** The flow a {@code <} line without ports is about: the last one created, or named by a line's ports. */
    private ScriptFlow current;
    /** The current UDP flow, Tern's port and the remote's: what a {@code <} datagram line without ports uses. */
    private int udpTernPort = SCRIPT_PORT;
    private int udpRemotePort = REMOTE_PORT;
    private java.io.PrintStream trace;
    /**
     * A TCP socket was opened since the last SYN the script injected: under packetdrill's rule the next injected SYN
     * without ACK is a new connection of a new socket under test, numbered afresh even on ports used before.
     */
    private boolean socketOpened;
    /** The socket opened last connected: a SYN injected now crosses its SYN (a simultaneous open), as packetdrill's. */
    private boolean connecting;
    /** The call now starting with a {@code START...END} time, if any. */
    private ScriptLine.Call spanning;
    /** Blocking calls that span time and have not returned yet, in the order they started. */
    private final List<Pending> pendings = new ArrayList<>();
    private boolean settling;
    /** What the application writes at each TCP sequence number: {@link ScriptPayload#tern}, unless a test says. */
    private final LongToIntFunction applicationBytes;

    /** The IP version the run's TCP goes over (docs/SCRIPTS.md, "IPv6"). */
    private final ScriptIpVersion ipVersion;
    /** Whether the wire carries IPv6 ({@link ScriptIpVersion#IPV6}). */
    private final boolean ipv6;

    private ScriptRunner(String file, ScriptProfile profile, ScriptAddresses addresses, int wireMtu,
                         LongToIntFunction applicationBytes, ScriptIpVersion ipVersion) {
        this.ipVersion = ipVersion;
        this.ipv6 = ipVersion == ScriptIpVersion.IPV6;
        this.file = file;
        this.profile = profile;
        this.applicationBytes = applicationBytes;
        this.ternAddress = addresses.tern();
        this.remoteAddress = addresses.remote();
        wire = ScriptWire.build(clock, wireMtu);
        remote = wire.attach("remote", REMOTE_MAC);
        remote.promiscuous(true);
        final NetStack.Builder builder = NetStack.builder().name("script").link(wire.attach("tern", TERN_MAC))
            .address(addresses.ternCidr()).clock(clock).countersInMemory().tcp(profile.tcp());
        if (addresses.gateway() != 0) {
            builder.gateway(Ipv4Address.format(addresses.gateway()));
        }
        if (ipv6) {
            builder.ipv6(Ipv6Config.withAddresses(List.of(new Ipv6InterfaceAddress(ScriptIpVersion.TERN_IPV6, 64)))
                .withDadTransmits(0));
        }
        stack = (wireMtu > profile.mtu() ? builder.mtu(profile.mtu()) : builder).build();
        sockets = new ScriptSockets(this, stack);
        // The remote asks for Tern's address first, so Tern knows its MAC and sends segments without ARP.
        final byte[] arp = new byte[ArpPacket.LENGTH];
        new ArpPacket().wrap(MemorySegment.ofArray(arp), 0, arp.length).write(1, REMOTE_MAC, remoteAddress, 0,
            ternAddress);
        inject(MacAddress.BROADCAST, EtherType.ARP, arp);
        if (ipv6) {
            // Over IPv6 the same by a neighbour solicitation from the remote (RFC 4861 §7.2.3).
            final Ipv6Address solicited = ScriptIpVersion.TERN_IPV6.solicitedNode();
            injectIcmpv6(Ipv6Address.multicastMac(solicited.low()), ScriptIpVersion.REMOTE_IPV6, solicited,
                NEIGHBOR_SOLICITATION, ScriptIpVersion.TERN_IPV6, SOURCE_LINK_LAYER);
        }
        poll();
        sent.clear();
    }

    private static final int NEIGHBOR_SOLICITATION = 135;
    private static final int NEIGHBOR_ADVERTISEMENT = 136;
    private static final int SOURCE_LINK_LAYER = 1;
    private static final int TARGET_LINK_LAYER = 2;

    /**
     * A neighbour solicitation or advertisement from the remote (hop limit 255, RFC 4861 §7.1) about {@code target},
     * with the remote's MAC in an option of {@code optionType}; an advertisement solicited and overriding.
     */
    private void injectIcmpv6(long destinationMac, Ipv6Address source, Ipv6Address destination, int type,
                              Ipv6Address target, int optionType) {
        final byte[] packet = new byte[Ipv6Header.LENGTH + 32];
        final java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(packet);
        b.putInt(6 << 28).putShort((short) 32).put((byte) NextHeader.ICMPV6).put((byte) 255);
        b.putLong(source.high()).putLong(source.low()).putLong(destination.high()).putLong(destination.low());
        b.put((byte) type).put((byte) 0).putShort((short) 0).putInt(type == NEIGHBOR_ADVERTISEMENT ? 0x6000_0000 : 0);
        b.putLong(target.high()).putLong(target.low());
        b.put((byte) optionType).put((byte) 1).putShort((short) (REMOTE_MAC >>> 32)).putInt((int) REMOTE_MAC);
        final MemorySegment segment = MemorySegment.ofArray(packet);
        final int checksum = InternetChecksum.finish(InternetChecksum.add(
            Ipv6Header.pseudoHeaderSum(segment, 0, 32, NextHeader.ICMPV6), segment, Ipv6Header.LENGTH, 32));
        b.putShort(Ipv6Header.LENGTH + 2, (short) checksum);
        inject(destinationMac, EtherType.IPV6, packet);
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
        run(file, text, profile, trace, ScriptPayload::tern);
    }

    /**
     * As {@link #run(String, String, ScriptProfile, java.io.PrintStream)}, with the application writing
     * {@code applicationBytes} of each sequence number instead of {@link ScriptPayload#tern}: what a stack that
     * corrupts data would put on the wire, for tests of the runner's data comparison.
     */
    static void run(String file, String text, ScriptProfile profile, java.io.PrintStream trace,
                    LongToIntFunction applicationBytes) {
        run(file, text, profile, trace, applicationBytes, ScriptIpVersion.IPV4);
    }

    /**
     * As {@link #run(String, String, ScriptProfile, java.io.PrintStream)}, over {@code ipVersion} unless the script's
     * own {@code --ip_version} line says otherwise (packetdrill's {@code --ip_version} on its command line).
     */
    public static void run(String file, String text, ScriptProfile profile, java.io.PrintStream trace,
                           ScriptIpVersion ipVersion) {
        run(file, text, profile, trace, ScriptPayload::tern, ipVersion);
    }

    private static void run(String file, String text, ScriptProfile profile, java.io.PrintStream trace,
                            LongToIntFunction applicationBytes, ScriptIpVersion ipVersion) {
        final List<ScriptLine> lines = ScriptParser.parse(file, text, profile, ipVersion);
        final ScriptSettings.Applied applied = ScriptSettings.apply(file, lines, profile);
        ScriptIpVersion version = ipVersion;
        boolean mtuGiven = false;
        for (ScriptLine line : lines) {
            if (line instanceof ScriptLine.Sysctl s && s.name().equals(ScriptParser.IP_VERSION_OPTION)) {
                version = ScriptIpVersion.values()[(int) s.value()];
            }
            mtuGiven |= line instanceof ScriptLine.Sysctl s && s.name().equals(ScriptParser.MTU_OPTION);
        }
        ScriptProfile runProfile = applied.profile();
        if (version == ScriptIpVersion.IPV6 && !mtuGiven && runProfile.dialect() != ScriptDialect.FREEBSD) {
            // As packetdrill's run_all.py runs the IPv6 variant (--mtu=1520): 20 bytes more for IPv6's larger header,
            // so that the MSS, and every segment a script writes, stays what it is over IPv4. FreeBSD's suite runs its
            // IPv6 scripts at packetdrill's own MTU of 1500 and writes the MSS of it (1440).
            runProfile = runProfile.withOptions(runProfile.mtu() + 20, runProfile.toleranceNs(),
                runProfile.tolerancePercent(), runProfile.tsTickUs(), runProfile.strictSegments(), runProfile.gsoMss());
        }
        final ScriptRunner runner = new ScriptRunner(file, runProfile, ScriptAddresses.of(file, lines),
            ScriptWire.mtu(lines, runProfile, version == ScriptIpVersion.IPV6), applicationBytes, version);
        runner.liveSettings = applied.live();
        runner.trace = trace;
        try {
            runner.runAll(lines);
        } finally {
            runner.sockets.close();
            runner.stack.close();
            runner.wire.close();
        }
    }

    /** A line that is not a packet Tern sends, at its time. */
    private void happen(ScriptLine line) {
        switch (line) {
            case ScriptLine.Packet p -> inject(p);
            case ScriptLine.Datagram d -> inject(d);
            case ScriptLine.Icmp i -> inject(i);
            // A leading setting made the stack's configuration (ScriptSettings); a later one that changes what
            // connections take when they open is handed to the stack now, as a sysctl applies to later sockets.
            case ScriptLine.Sysctl setting -> {
                final ScriptProfile next = liveSettings.get(setting);
                if (next != null) {
                    stack.tcp().reconfigure(next.tcp());
                    profile = next;
                }
            }
            case ScriptLine.SocketCount count -> ScriptSockstat.check(this, stack.tcp(), sockets, count);
            case ScriptLine.SocketDrop drop -> {
                ScriptSockstat.drop(this, stack.tcp(), sockets, drop);
                poll();
            }
            case ScriptLine.TcpInfoAsserts block -> sockets.checkTcpInfo(block);
            case ScriptLine.Call c -> {
                if (c.spansTime()) {
                    spanning = c;
                }
                try {
                    call(c);
                } finally {
                    spanning = null;
                }
            }
        }
    }

    private void runAll(List<ScriptLine> lines) {
        for (ScriptLine line : lines) {
            switch (line) {
                case ScriptLine.Packet p when !p.inbound() -> expect(p);
                case ScriptLine.Datagram d when !d.inbound() -> expect(d);
                case ScriptLine.Icmp i when !i.inbound() -> expect(i);
                default -> {
                    // Everything else happens at its time, and the next relative time counts from it.
                    waitUntil(line);
                    try {
                        happen(line);
                    } catch (NumberFormatException e) {
                        throw ScriptParser.tooLarge(file, line.line(), e);
                    }
                    lastNs = now();
                }
            }
        }
        long lastReturn = Long.MIN_VALUE;
        for (Pending p : pendings) {
            lastReturn = Math.max(lastReturn, p.returnNs + p.toleranceNs);
        }
        if (!pendings.isEmpty()) {
            advance(lastReturn + 1, pendings::isEmpty);
        }
        poll();
        final Sent extra = sent.peekFirst();
        // Packetdrill stops at its last line and never looks at what the stack sends after it; the profiles for
        // other stacks' scripts do the same. Our own (corpus, bare) require a line for everything Tern sends.
        if (extra != null && profile.strictEnd()) {
            final int last = lines.isEmpty() ? 0 : lines.getLast().line();
            throw failure(last, "Tern sent " + describe(extra) + " at " + seconds(extra.atNs)
                + " s, which no line of the script expects");
        }
    }

    // ------------------------------------------------------------------------------------------------ time

    /** What the application writes at each TCP sequence number (on the wire). */
    LongToIntFunction applicationBytes() {
        return applicationBytes;
    }

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

    /**
     * How far from {@code atNs} a line's event may happen, when the line before it was at {@code sinceNs}:
     * packetdrill's rule, the profile's tolerance or its share ({@code --tolerance_percent}) of the time between
     * them, whichever is more.
     */
    private long tolerance(long atNs, long sinceNs) {
        return Math.max(profile.toleranceNs(), (long) (profile.tolerancePercent() / 100 * (atNs - sinceNs)));
    }

    /** What getsockopt reports for a socket's receive or send buffer it did not set (before the dialect's rounding). */
    long reportedBuffer(boolean receive) {
        final long reported = receive ? profile.reportedReceiveBuffer() : profile.reportedSendBuffer();
        return reported > 0 ? reported : receive ? profile.tcp().receiveBufferSize() : profile.tcp().sendBufferSize();
    }

    /** The system whose names the script uses. */
    ScriptDialect dialect() {
        return profile.dialect();
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
            for (Pending p : pendings) {
                next = Math.min(next, START_NS + Math.min(p.returnNs + p.toleranceNs + 1, p.wakeNs));
            }
            if (next - nowNs <= 0) {
                next = nowNs + 1;
            }
            clock.advanceTo(Math.min(next, START_NS + target));
            poll();
        }
        return true;
    }

    /** Finishes the pending blocking calls that can return; fails the script when one is late or returns early. */
    private void settlePending() {
        if (pendings.isEmpty() || settling) {
            return;
        }
        settling = true;
        try {
            for (Pending p : List.copyOf(pendings)) {
                settle(p);
            }
        } finally {
            settling = false;
        }
    }

    /** One pending call: checked when it can return, failed when it is still waiting past its time. */
    private void settle(Pending p) {
        final long tolerance = p.toleranceNs;
        if (p.ready.getAsBoolean()) {
            pendings.remove(p);
            final Result result = p.resume.get();
            if (now() < p.returnNs - tolerance) {
                throw failure(p.call.line(), p.call.name() + " returned " + result + " at " + seconds(now())
                    + " s, before the script's " + seconds(p.returnNs) + " s (tolerance "
                    + tolerance / 1_000_000 + " ms)");
            }
            check(p.call, result);
        } else if (now() > p.returnNs + tolerance) {
            pendings.remove(p);
            throw failure(p.call.line(), "the blocking call " + p.call.name() + "(" + String.join(", ",
                p.call.args()) + ") had not returned at " + seconds(now()) + " s, after the script's "
                + seconds(p.returnNs) + " s (waiting for " + p.waitingFor + ")");
        }
    }

    static String seconds(long ns) {
        return String.format(Locale.ROOT, "%.6f", ns / 1e9);
    }

    // -------------------------------------------------------------------------------------------- flows

    /**
     * The Fast Open cookie Tern's server gives the runner's default remote (198.18.0.1 to 198.18.0.2) under {@code
     * tcp}'s key. Its 8 bytes, the first on the wire on top.
     */
    public static long fastOpenCookie(dev.tern.tcp.TcpConfig tcp) {
        return tcp.fastOpenKeys().cookie(REMOTE_ADDRESS, TERN_ADDRESS);
    }

    /**
     * What a script's {@code TFO_COOKIE} stands for: the cookie Tern's server gives this run's remote at this run's
     * addresses under the run's key, as packetdrill's run_all.py defines it for the kernel's cookie (RFC 7413 §4.1.2:
     * the cookie is made of the client's address).
     */
    private long runCookie() {
        if (ipv6) {
            // Tern's server makes an IPv6 client's cookie of the addresses' folds (docs/TCP.md, "Families").
            final Ipv6Address remote = ScriptIpVersion.REMOTE_IPV6;
            final Ipv6Address tern = ScriptIpVersion.TERN_IPV6;
            return profile.tcp().fastOpenKeys().cookie(
                stack.tcp().remoteAddressFold(remote.high(), remote.low(), tern.high(), tern.low()),
                stack.tcp().addressFold(tern.high(), tern.low()));
        }
        return profile.tcp().fastOpenKeys().cookie(remoteAddress, ternAddress);
    }

    /** The run's IP version. */
    ScriptIpVersion ipVersion() {
        return ipVersion;
    }

    /** Whether the run's wire carries IPv6: the sockets then talk to {@link ScriptIpVersion#REMOTE_IPV6}. */
    boolean ipv6() {
        return ipv6;
    }

    /** The remote's address on this run's wire. */
    int remoteAddress() {
        return remoteAddress;
    }

    /** The flow of Tern's port and the remote's, created (not made current) when the script has not seen it yet. */
    private ScriptFlow flowOf(int ternPort, int remotePort) {
        for (ScriptFlow f : flows) {
            if (f.is(ternPort, remotePort)) {
                return f;
            }
        }
        final ScriptFlow f = new ScriptFlow(ternPort, remotePort, runCookie());
        flows.add(f);
        return f;
    }

    /**
     * The flow a {@code <} line is about: the one its ports name (created when new), else the current flow, else
     * the first flow (the remote's port 48000 to Tern's 8080). The flow becomes the current one.
     */
    private ScriptFlow inboundFlow(ScriptLine.Packet p) {
        if (p.ports() != null) {
            current = flowOf(p.ports().destination(), p.ports().source());
        } else if (current == null) {
            current = flowOf(SCRIPT_PORT, REMOTE_PORT);
        }
        return current;
    }

    /** A connect opened a connection from {@code ternPort} to the remote's {@code remotePort}: the new current flow. */
    void connected(int ternPort, int remotePort) {
        final ScriptFlow f = flowOf(ternPort, remotePort);
        f.ternConnects();
        current = f;
        connecting = true;
    }

    /** The remote's next port that no flow to Tern's {@code ternPort} uses yet. */
    private int freeRemotePort(int ternPort) {
        int port = REMOTE_PORT + 1;
        while (port < 65535 && hasFlow(ternPort, port)) {
            port++;
        }
        return port;
    }

    private boolean hasFlow(int ternPort, int remotePort) {
        return flows.stream().anyMatch(f -> f.is(ternPort, remotePort));
    }

    /** The script opened a TCP socket: packetdrill's new socket under test ({@link #socketOpened}). */
    void socketOpened() {
        socketOpened = true;
        connecting = false;
    }

    /** Whether the profile follows packetdrill's socket under test (other stacks' suites). */
    boolean followsSocketUnderTest() {
        return profile.followsSocketUnderTest();
    }

    /** A UDP socket was bound, connected or sent from: its ports are the current UDP flow. */
    void udpFlow(int ternPort, int remotePort) {
        udpTernPort = ternPort;
        udpRemotePort = remotePort;
    }

    private String describe(Sent s) {
        if (s.tcp != null) {
            return s.flow.describe(s.tcp) + (flows.size() > 1 ? " (ports " + s.tcp.sourcePort() + ">"
                + s.tcp.destinationPort() + ")" : "");
        }
        if (s.udp != null) {
            return "'" + s.udp.sourcePort + ">" + s.udp.destinationPort + " udp (" + s.udp.length + ")'";
        }
        final IcmpSeen i = s.icmp;
        final StringBuilder text = new StringBuilder("'");
        if (i.quotedProtocol == IpProtocol.UDP) {
            text.append("[udp (").append(i.quotedUdpLength).append(")] ");
        } else if (i.quotedProtocol == IpProtocol.TCP) {
            final ScriptFlow f = flowOf(i.quotedSourcePort, i.quotedDestinationPort);
            final long seq = ScriptFlow.relative((int) i.quotedSeq, f.ternIsn < 0 ? 0 : f.ternIsn);
            text.append('[').append(seq).append(":").append(seq).append("(0)] ");
        } else if (i.quotedProtocol >= 0) {
            text.append("[").append(IpProtocol.name(i.quotedProtocol)).append("] ");
        }
        if (ipv6) {
            text.append(ScriptIcmp6.describe(i.type, i.code, i.mtu, i.identifier, i.length));
        } else if (!IcmpHeader.isError(i.type)) {
            text.append("icmp ").append(ScriptParser.icmpTypeName(i.type)).append(i.code == 0 ? "" : " code_" + i.code)
                .append(i.type == IcmpHeader.ECHO_REPLY || i.type == IcmpHeader.ECHO_REQUEST ? " id " + i.identifier
                    : "").append(" [raw (").append(i.length).append(")]");
        } else if (i.type != IcmpHeader.DESTINATION_UNREACHABLE) {
            text.append("icmp ").append(ScriptParser.icmpTypeName(i.type)).append(i.code == 0 ? "" : " code_" + i.code);
        } else {
            text.append("icmp unreachable ").append(switch (i.code) {
                case IcmpHeader.NET_UNREACHABLE -> "net";
                case IcmpHeader.HOST_UNREACHABLE -> "host";
                case IcmpHeader.PROTOCOL_UNREACHABLE -> "protocol";
                case IcmpHeader.PORT_UNREACHABLE -> "port";
                case IcmpHeader.FRAGMENTATION_NEEDED -> "frag_needed mtu " + i.mtu;
                default -> "code " + i.code;
            });
        }
        return text.append("'").toString();
    }

    // -------------------------------------------------------------------------------------- Tern's packets

    private int collect() {
        final int[] count = {0};
        final List<byte[]> arpReplies = new ArrayList<>();
        final List<Ipv6Address> neighbourReplies = new ArrayList<>();
        remote.receive((segment, offset, length, flags) -> {
            if (length < EthernetHeader.LENGTH) {
                return;
            }
            final int etherType = BigEndian.u16(segment, offset + 12);
            count[0]++;
            if (etherType == EtherType.ARP && length >= EthernetHeader.LENGTH + ArpPacket.LENGTH) {
                // The remote answers ARP for its address, as a real host would; the script never sees ARP.
                final ArpPacket arp = new ArpPacket().wrap(segment, offset + EthernetHeader.LENGTH, ArpPacket.LENGTH);
                // It answers for the gateway too, when the remote is off Tern's subnet: it stands for the path.
                if (arp.operation() == 1 && arp.targetIp() != ternAddress) {
                    final byte[] reply = new byte[ArpPacket.LENGTH];
                    new ArpPacket().wrap(MemorySegment.ofArray(reply), 0, reply.length)
                        .write(2, REMOTE_MAC, arp.targetIp(), arp.senderMac(), arp.senderIp());
                    arpReplies.add(reply);
                }
                return;
            }
            if (etherType == EtherType.IPV6 && ipv6 && length >= EthernetHeader.LENGTH + Ipv6Header.LENGTH) {
                collect6(segment, offset + EthernetHeader.LENGTH, length - EthernetHeader.LENGTH, neighbourReplies);
                return;
            }
            if (etherType != EtherType.IPV4 || length < EthernetHeader.LENGTH + Ipv4Header.MIN_LENGTH) {
                return;
            }
            final Ipv4Header ip = new Ipv4Header().wrap(segment, offset + EthernetHeader.LENGTH,
                length - EthernetHeader.LENGTH);
            // TCP, UDP and ICMP to the remote are scripted; IGMP (multicast membership) is not (docs/SCRIPTS.md).
            if (ip.check(true) != Ipv4Header.OK || ip.destination() != remoteAddress) {
                return;
            }
            final int transportLength = ip.totalLength() - ip.headerLength();
            final long at = offset + EthernetHeader.LENGTH + ip.headerLength();
            final long pseudo = InternetChecksum.pseudoHeader(ip.source(), ip.destination(), ip.protocol(),
                transportLength);
            final Sent s = switch (ip.protocol()) {
                case IpProtocol.TCP -> tcpSent(segment, at, transportLength, pseudo, ip.tos(), ip.ttl(), 0);
                case IpProtocol.UDP -> udpSent(segment, at, transportLength, pseudo, ip.tos(), ip.ttl(), false);
                case IpProtocol.ICMP -> icmpSent(segment, at, transportLength, 0, ip.tos(), ip.ttl(), false);
                default -> null;
            };
            if (s == null) {
                return;
            }
            sent.add(s);
            if (trace != null) {
                trace.println(seconds(s.atNs) + " > " + describe(s));
            }
        }, 100_000);
        for (byte[] reply : arpReplies) {
            inject(TERN_MAC, EtherType.ARP, reply);
        }
        for (Ipv6Address target : neighbourReplies) {
            injectIcmpv6(TERN_MAC, target, ScriptIpVersion.TERN_IPV6, NEIGHBOR_ADVERTISEMENT, target, TARGET_LINK_LAYER);
        }
        return count[0];
    }

    /**
     * An IPv6 packet Tern sent: a TCP segment, a UDP datagram, an ICMPv6 error or echo to the remote is scripted, as
     * over IPv4; a neighbour solicitation for the remote is answered (it stands for the path, as with ARP); MLD
     * reports, router solicitations and the rest are not scripted.
     */
    private void collect6(MemorySegment segment, long at, int length, List<Ipv6Address> neighbourReplies) {
        final int payloadLength = BigEndian.u16(segment, at + 4);
        final int nextHeader = BigEndian.u8(segment, at + 6);
        if (Ipv6Header.LENGTH + payloadLength > length) {
            throw new ScriptException(file, 0, "Tern sent an IPv6 packet longer than its frame (a bug in Tern)");
        }
        final long upper = at + Ipv6Header.LENGTH;
        if (nextHeader == NextHeader.ICMPV6 && payloadLength >= 24
            && BigEndian.u8(segment, upper) == NEIGHBOR_SOLICITATION) {
            final Ipv6Address target = Ipv6Address.read(segment, upper + 8);
            if (!target.equals(ScriptIpVersion.TERN_IPV6)) {
                neighbourReplies.add(target);
            }
            return;
        }
        final Ipv6Address destination = Ipv6Address.read(segment, at + 24);
        if (!destination.equals(ScriptIpVersion.REMOTE_IPV6)) {
            return;
        }
        final long pseudo = Ipv6Header.pseudoHeaderSum(segment, at, payloadLength, nextHeader);
        final int word = BigEndian.i32(segment, at);
        final int trafficClass = (word >>> 20) & 0xFF;
        final int hopLimit = BigEndian.u8(segment, at + 7);
        final Sent s = switch (nextHeader) {
            case NextHeader.TCP -> tcpSent(segment, upper, payloadLength, pseudo, trafficClass, hopLimit,
                word & 0xF_FFFF);
            case NextHeader.UDP -> udpSent(segment, upper, payloadLength, pseudo, trafficClass, hopLimit, true);
            // Of ICMPv6 the script sees errors and echoes; neighbour discovery and MLD stand for the path.
            case NextHeader.ICMPV6 -> payloadLength >= 1 && scripted6(BigEndian.u8(segment, upper))
                ? icmpSent(segment, upper, payloadLength, pseudo, trafficClass, hopLimit, true) : null;
            default -> null;
        };
        if (s == null) {
            return;
        }
        sent.add(s);
        if (trace != null) {
            trace.println(seconds(s.atNs) + " > " + describe(s));
        }
    }

    /** The ICMPv6 types a script writes: the errors and the echoes (RFC 4443 §3, §4). */
    private static boolean scripted6(int type) {
        return ScriptIcmp6.isError(type) || ScriptIcmp6.isEcho(type);
    }

    /**
     * A TCP segment Tern sent, checked against {@code pseudo}, the sum of its IP version's pseudo-header; with the IP
     * header's TOS byte (traffic class), TTL (hop limit) and flow label (0 over IPv4).
     */
    private Sent tcpSent(MemorySegment segment, long at, int tcpLength, long pseudo, int tos, int ttl, int flowLabel) {
        final TcpHeader header = new TcpHeader().wrap(segment, at, tcpLength);
        if (header.check() != TcpHeader.OK) {
            throw new ScriptException(file, 0, "Tern sent a malformed TCP header (a bug in Tern)");
        }
        if (!InternetChecksum.verifies(InternetChecksum.add(pseudo, segment, at, tcpLength))) {
            throw new ScriptException(file, 0, "Tern sent a TCP segment with a bad checksum (a bug in Tern)");
        }
        final TcpRepr tcp = TcpRepr.parse(header, tcpLength);
        final byte[] data = segment.asSlice(at + header.dataOffset(), tcp.payloadLength()).toArray(ValueLayout.JAVA_BYTE);
        return new Sent(now(), tcp, flowOf(tcp.sourcePort(), tcp.destinationPort()), null, null, data, tos, ttl,
            flowLabel);
    }

    /** A UDP datagram Tern sent; over IPv6 its checksum may not be 0 (RFC 8200 §8.1), over IPv4 0 is none. */
    private Sent udpSent(MemorySegment segment, long at, int udpLength, long pseudo, int tos, int ttl, boolean v6) {
        if (udpLength < 8 || BigEndian.u16(segment, at + 4) != udpLength) {
            throw new ScriptException(file, 0, "Tern sent a UDP datagram whose length field is wrong (a bug in Tern)");
        }
        final boolean unchecked = BigEndian.u16(segment, at + 6) == 0;
        if (unchecked ? v6 : !InternetChecksum.verifies(InternetChecksum.add(pseudo, segment, at, udpLength))) {
            throw new ScriptException(file, 0, "Tern sent a UDP datagram with a bad checksum (a bug in Tern)");
        }
        return new Sent(now(), null, null, new UdpSeen(BigEndian.u16(segment, at), BigEndian.u16(segment, at + 2),
            udpLength - 8), null, segment.asSlice(at + 8, udpLength - 8).toArray(ValueLayout.JAVA_BYTE), tos, ttl, 0);
    }

    /**
     * An ICMP message Tern sent (ICMPv6 when {@code v6}, checked with {@code pseudo}, IPv6's pseudo-header: RFC 4443
     * §2.3; ICMP's checksum covers the message alone) and the ports of what an error quotes.
     */
    private Sent icmpSent(MemorySegment segment, long at, int icmpLength, long pseudo, int tos, int ttl, boolean v6) {
        if (icmpLength < IcmpHeader.LENGTH || !InternetChecksum.verifies(InternetChecksum.add(pseudo, segment, at,
            icmpLength))) {
            throw new ScriptException(file, 0,
                "Tern sent a short ICMP message or one with a bad checksum (a bug in Tern)");
        }
        final int type = BigEndian.u16(segment, at) >>> 8;
        final int code = BigEndian.u16(segment, at) & 0xFF;
        final long mtu = v6 ? Integer.toUnsignedLong(BigEndian.i32(segment, at + 4)) : BigEndian.u16(segment, at + 6);
        int protocol = -1;
        int sourcePort = -1;
        int destinationPort = -1;
        long seq = -1;
        int udpLength = -1;
        final long quoted = at + IcmpHeader.LENGTH;
        final int ipHeader = v6 ? Ipv6Header.LENGTH : Ipv4Header.MIN_LENGTH;
        if ((v6 ? ScriptIcmp6.isError(type) : IcmpHeader.isError(type))
            && icmpLength >= IcmpHeader.LENGTH + ipHeader + 8) {
            final int ihl = v6 ? Ipv6Header.LENGTH : (BigEndian.u16(segment, quoted) >>> 8 & 0xF) * 4;
            protocol = v6 ? BigEndian.u8(segment, quoted + 6) : BigEndian.u16(segment, quoted + 8) & 0xFF;
            final int quotedTotal = v6 ? Ipv6Header.LENGTH + BigEndian.u16(segment, quoted + 4)
                : BigEndian.u16(segment, quoted + 2);
            if (icmpLength >= IcmpHeader.LENGTH + ihl + 8) {
                sourcePort = BigEndian.u16(segment, quoted + ihl);
                destinationPort = BigEndian.u16(segment, quoted + ihl + 2);
                if (protocol == IpProtocol.TCP) {
                    seq = Integer.toUnsignedLong(BigEndian.i32(segment, quoted + ihl + 4));
                } else if (protocol == IpProtocol.UDP) {
                    udpLength = Math.min(BigEndian.u16(segment, quoted + ihl + 4), quotedTotal - ihl) - 8;
                }
            }
        }
        return new Sent(now(), null, null, null, new IcmpSeen(type, code, mtu, BigEndian.u16(segment, at + 4),
            icmpLength, protocol, sourcePort, destinationPort, seq, udpLength),
            segment.asSlice(quoted, icmpLength - IcmpHeader.LENGTH).toArray(ValueLayout.JAVA_BYTE), tos, ttl, 0);
    }

    /**
     * Whether Tern has sent a packet a {@code >} line may take. With {@code onlyCurrent}, packetdrill's rule for a
     * line about its socket under test: a TCP segment of a connection other than the current flow is passed over
     * and dropped, as packetdrill drops a sniffed packet of no socket it follows (shown with {@code --verbose}).
     */
    private boolean hasSent(boolean onlyCurrent) {
        while (onlyCurrent && current != null && !sent.isEmpty() && sent.peekFirst().tcp != null
            && sent.peekFirst().flow != current) {
            final Sent other = sent.pollFirst();
            if (trace != null) {
                trace.println(seconds(other.atNs) + " (passed over: not the current connection) " + describe(other));
            }
        }
        return !sent.isEmpty();
    }

    /** Takes the oldest packet Tern sent within the line's time (plus tolerance), or fails the line. */
    private Sent takeSent(ScriptLine line) {
        final ScriptLine.When when = line.when();
        final long lo = when.any() ? 0 : start(when);
        final long hi = when.any() ? now() + ANY_TIME_LIMIT_NS : end(when);
        final long tolerance = when.any() ? 0 : tolerance(lo, lastNs);
        final boolean onlyCurrent = line instanceof ScriptLine.Packet p && p.ports() == null
            && profile.followsSocketUnderTest();
        if (!advance(hi + tolerance, () -> hasSent(onlyCurrent))) {
            final String expected = "expected Tern to send '" + packetText(line) + "'"
                + (when.any() ? "" : " at " + timeText(lo, hi)) + ", but Tern sent nothing by " + seconds(now()) + " s";
            // Look a little further, so the message can say what Tern did instead.
            if (!when.any() && advance(now() + LOOK_AHEAD_NS, () -> hasSent(onlyCurrent))) {
                throw failure(line.line(), expected + "; it sent " + describe(sent.peekFirst()) + " at "
                    + seconds(sent.peekFirst().atNs) + " s");
            }
            throw failure(line.line(), expected);
        }
        final Sent s = sent.pollFirst();
        if (!when.any() && (s.atNs < lo - tolerance || s.atNs > hi + tolerance)) {
            throw failure(line.line(), "expected '" + packetText(line) + "' at " + timeText(lo, hi) + " (tolerance "
                + new java.math.BigDecimal(tolerance).movePointLeft(6).stripTrailingZeros().toPlainString()
                + " ms); Tern sent " + describe(s) + " at " + seconds(s.atNs)
                + " s");
        }
        return s;
    }

    private void expect(ScriptLine line) {
        final Sent taken = takeSent(line);
        final Sent s = line instanceof ScriptLine.Packet p && !profile.strictSegments() ? joinSegments(p, taken)
            : taken;
        final String mismatch = switch (line) {
            // The TS val's tolerance grows with the time since the script's start, as packetdrill's.
            case ScriptLine.Packet p -> s.tcp == null ? "not a TCP segment"
                : segmentMismatch(p, s, profile, tolerance(s.atNs, 0), ipv6);
            case ScriptLine.Datagram d -> s.udp == null ? "not a UDP datagram" : datagramMismatch(d, s);
            case ScriptLine.Icmp i -> s.icmp == null ? "not an ICMP message" : orElse(icmpMismatch(i, s),
                ipMismatch(i.ip(), s.tos, s.ttl));
            case ScriptLine.Call c -> throw new IllegalStateException("a call is not a packet");
            case ScriptLine.Sysctl c -> throw new IllegalStateException("a sysctl is not a packet");
            case ScriptLine.TcpInfoAsserts b -> throw new IllegalStateException("a Python block is not a packet");
            case ScriptLine.SocketCount b -> throw new IllegalStateException("a socket count is not a packet");
            case ScriptLine.SocketDrop b -> throw new IllegalStateException("tcpdrop is not a packet");
        };
        if (mismatch != null) {
            throw failure(line.line(), "expected '" + packetText(line) + "'; Tern sent " + describe(s) + " at "
                + seconds(s.atNs) + " s" + (s == taken ? "" : " (segments joined, as packetdrill joins them)")
                + ": " + mismatch);
        }
        if (s.tcp != null && line instanceof ScriptLine.Packet p && p.ports() != null) {
            current = s.flow;
        }
        lastNs = s.atNs;
    }

    /**
     * The flow's comparison of the header, then every byte of the data against what the application wrote at its
     * sequence number ({@link ScriptPayload#tern}; data on a SYN would start after it).
     */
    private static String segmentMismatch(ScriptLine.Packet p, Sent s, ScriptProfile profile, long tsToleranceNs,
                                          boolean ipv6) {
        final String header = s.flow.mismatch(p, s.tcp, profile.tsTickUs(), tsToleranceNs);
        if (header != null) {
            return header;
        }
        final String ip = ipMismatch(p.ip(), s.tos, s.ttl);
        if (ip != null) {
            return ip;
        }
        // As packetdrill, a flow label is an IPv6 field: over IPv4 a line's is not compared.
        final String label = ipv6 ? s.flow.flowLabelMismatch(p.ip().flowLabel(), s.flowLabel) : null;
        if (label != null) {
            return label;
        }
        final long first = Integer.toUnsignedLong(s.tcp.seq()) + ((s.tcp.flags() & TcpFlags.SYN) != 0 ? 1 : 0);
        final MemorySegment data = MemorySegment.ofArray(s.data);
        final int wrong = ScriptPayload.firstDifference(data, 0, s.data.length, first, ScriptPayload::tern);
        return wrong < 0 ? null : "byte " + wrong + " of the data (sequence number "
            + ScriptFlow.relative((int) (first + wrong), s.flow.ternIsn < 0 ? 0 : s.flow.ternIsn) + ") "
            + ScriptPayload.difference(data, 0, wrong, first, ScriptPayload::tern) + " (the application wrote "
            + "the pattern of docs/SCRIPTS.md there)";
    }

    /**
     * Packetdrill (without {@code --strict_segments}, which turns this off) lets a {@code >} line with more data than Tern's segment match
     * the segments that follow it back to back, as it joins the pieces of a TSO/GSO segment: each continues the one
     * before (the next sequence number, the same ports, ACK number, window and flags but FIN, PSH and CWR), each but
     * the last as long as the one before, until the line's length is reached. Tern joins the segments it has already
     * sent at that moment; the joined segment has the last one's header and time, the first one's sequence number
     * and CWR flag, as packetdrill's.
     */
    private Sent joinSegments(ScriptLine.Packet p, Sent first) {
        if (first.tcp == null || first.data.length == 0 || first.data.length >= p.payloadLength()) {
            return first;
        }
        final int loose = TcpFlags.FIN | TcpFlags.PSH | TcpFlags.CWR;
        final java.io.ByteArrayOutputStream data = new java.io.ByteArrayOutputStream();
        data.writeBytes(first.data);
        Sent last = first;
        while (data.size() < p.payloadLength() && !sent.isEmpty()) {
            final Sent next = sent.peekFirst();
            final TcpRepr a = last.tcp;
            final TcpRepr b = next.tcp;
            final boolean continues = b != null && b.sourcePort() == a.sourcePort()
                && b.destinationPort() == a.destinationPort() && b.seq() == a.seq() + a.payloadLength()
                && b.ack() == a.ack() && b.window() == a.window() && (b.flags() & ~loose) == (a.flags() & ~loose)
                && b.payloadLength() > 0
                && (data.size() + b.payloadLength() >= p.payloadLength() || b.payloadLength() == a.payloadLength());
            if (!continues) {
                break;
            }
            sent.pollFirst();
            data.writeBytes(next.data);
            last = next;
        }
        if (last == first) {
            return first;
        }
        final TcpRepr l = last.tcp;
        final TcpRepr joined = new TcpRepr(l.sourcePort(), l.destinationPort(), first.tcp.seq(), l.ack(),
            (l.flags() & ~TcpFlags.CWR) | (first.tcp.flags() & TcpFlags.CWR), l.window(), l.mss(), l.windowScale(),
            l.sackPermitted(), l.timestamp(), l.tsVal(), l.tsEcr(), l.sackBlocks(), data.size());
        return new Sent(last.atNs, joined, last.flow, null, null, data.toByteArray(), first.tos, first.ttl,
            first.flowLabel);
    }

    private static String datagramMismatch(ScriptLine.Datagram d, Sent s) {
        final UdpSeen actual = s.udp;
        if (d.ports() != null && (d.ports().source() != actual.sourcePort
            || d.ports().destination() != actual.destinationPort)) {
            return "ports " + actual.sourcePort + ">" + actual.destinationPort + ", not " + d.ports();
        }
        if (actual.length != d.length()) {
            return actual.length + " bytes, not " + d.length();
        }
        final String ip = ipMismatch(d.ip(), s.tos, s.ttl);
        if (ip != null) {
            return ip;
        }
        final MemorySegment data = MemorySegment.ofArray(s.data);
        final int wrong = ScriptPayload.firstDifference(data, 0, s.data.length, 0, ScriptPayload::ternDatagram);
        return wrong < 0 ? null : "byte " + wrong + " of the datagram "
            + ScriptPayload.difference(data, 0, wrong, 0, ScriptPayload::ternDatagram);
    }

    private String icmpMismatch(ScriptLine.Icmp i, Sent s) {
        final IcmpSeen actual = s.icmp;
        if (actual.type != i.type() || actual.code != i.code()) {
            return "type " + actual.type + " code " + actual.code + ", not type " + i.type() + " code " + i.code();
        }
        // Over IPv6 the line's MTU is Packet Too Big's 32 bits (ScriptParser), -1 when not written.
        final long mtu = ipv6 ? (i.mtu() == -1 ? -1 : Integer.toUnsignedLong(i.mtu())) : i.mtu();
        if (mtu >= 0 && actual.mtu != mtu) {
            return "mtu " + actual.mtu + ", not " + mtu;
        }
        if (i.id() >= 0 && actual.identifier != i.id()) {
            return "id " + actual.identifier + ", not " + i.id();
        }
        if (i.rawLength() >= 0 && actual.length != i.rawLength()) {
            return "raw (" + actual.length + "), not raw (" + i.rawLength() + ")";
        }
        if (actual.type == (ipv6 ? Icmpv6Header.ECHO_REPLY : IcmpHeader.ECHO_REPLY)) {
            // RFC 792: the data of the echo request returns in the reply, the remote's pattern as it was sent.
            final MemorySegment data = MemorySegment.ofArray(s.data);
            final int wrong = ScriptPayload.firstDifference(data, 0, s.data.length, 0, ScriptPayload::remoteDatagram);
            if (wrong >= 0) {
                return "byte " + wrong + " of the echoed data " + ScriptPayload.difference(data, 0, wrong, 0,
                    ScriptPayload::remoteDatagram);
            }
        }
        final ScriptLine.Ports ports = switch (i.quoted()) {
            case ScriptLine.Datagram d -> d.ports();
            case ScriptLine.Packet p -> p.ports();
            case null, default -> null;
        };
        if (ports != null && (ports.source() != actual.quotedSourcePort
            || ports.destination() != actual.quotedDestinationPort)) {
            return "it quotes ports " + actual.quotedSourcePort + ">" + actual.quotedDestinationPort + ", not " + ports;
        }
        switch (i.quoted()) {
            case null -> { }
            case ScriptLine.Datagram d -> {
                if (actual.quotedProtocol != IpProtocol.UDP) {
                    return "it quotes " + IpProtocol.name(actual.quotedProtocol) + ", not a UDP datagram";
                }
                if (actual.quotedUdpLength != d.length()) {
                    return "the quoted datagram holds " + actual.quotedUdpLength + " bytes, not " + d.length();
                }
            }
            case ScriptLine.Packet p -> {
                if (actual.quotedProtocol != IpProtocol.TCP) {
                    return "it quotes " + IpProtocol.name(actual.quotedProtocol) + ", not a TCP segment";
                }
            }
            default -> throw new IllegalStateException("an ICMP line quotes a packet");
        }
        return null;
    }

    /** The first difference, else the second (null when neither). */
    private static String orElse(String first, String second) {
        return first != null ? first : second;
    }

    private String timeText(long lo, long hi) {
        return lo == hi ? seconds(lo) + " s" : seconds(lo) + "~" + seconds(hi) + " s";
    }

    private static String packetText(ScriptLine line) {
        final String text = switch (line) {
            case ScriptLine.Packet p -> p.text();
            case ScriptLine.Datagram d -> d.text();
            case ScriptLine.Icmp i -> i.text();
            case ScriptLine.Call c -> c.text();
            case ScriptLine.Sysctl c -> c.name();
            case ScriptLine.TcpInfoAsserts b -> "%{ }%";
            case ScriptLine.SocketCount s -> s.text();
            case ScriptLine.SocketDrop d -> d.text();
        };
        final String stripped = text.strip();
        final int arrow = stripped.indexOf('>');
        return arrow < 0 ? stripped : stripped.substring(arrow + 1).strip();
    }

    // ------------------------------------------------------------------------------------ the remote's packets

    private void inject(ScriptLine.Packet p) {
        // Before Tern sent a SYN its ISN is unknown: ACK numbers and SACK blocks are then the wire's (a script
        // about segments to a closed port needs no more).
        ScriptFlow flow = inboundFlow(p);
        if ((p.flags() & (TcpFlags.SYN | TcpFlags.ACK)) == TcpFlags.SYN && socketOpened
            && profile.followsSocketUnderTest()) {
            if (p.ports() == null && flow.used() && !connecting) {
                // Packetdrill gives each new socket under test's connection a new ephemeral port of the remote's
                // (run_packet.c, next_ephemeral_port): an earlier connection on the old ports may still be open.
                flow = flowOf(flow.ternPort, freeRemotePort(flow.ternPort));
                current = flow;
            }
            flow.restart();
        }
        if ((p.flags() & TcpFlags.SYN) != 0) {
            socketOpened = false;
        }
        final int mss = profile.gsoMss();
        if (mss <= 0 || p.payloadLength() <= mss) {
            injectSegment(p, flow, 0, p.payloadLength(), p.flags());
            return;
        }
        // As packetdrill's --mss has the kernel's GSO cut it: every piece with the header, CWR on the first only,
        // FIN and PSH on the last only.
        for (int offset = 0; offset < p.payloadLength(); offset += mss) {
            final int length = Math.min(mss, p.payloadLength() - offset);
            final boolean last = offset + length == p.payloadLength();
            final int flags = p.flags() & ~(offset == 0 ? 0 : TcpFlags.CWR) & ~(last ? 0 : TcpFlags.FIN | TcpFlags.PSH);
            injectSegment(p, flow, offset, length, flags);
        }
    }

    /** One segment of the line's packet: {@code length} bytes of its data from {@code offset}, with {@code flags}. */
    private void injectSegment(ScriptLine.Packet p, ScriptFlow flow, int offset, int length, int flags) {
        final byte[] options = flow.optionBytes(p);
        final int headerLength = TcpHeader.MIN_LENGTH + options.length;
        if (headerLength > 60) {
            throw failure(p.line(), "the options take " + options.length + " bytes, more than TCP's 40");
        }
        final int tcpLength = headerLength + length;
        final byte[] segment = new byte[tcpLength];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, tcpLength);
        // An ack number without the ACK flag is written as it stands, as packetdrill writes it.
        final long ack = p.ack() < 0 ? 0 : (p.flags() & TcpFlags.ACK) == 0 ? p.ack() : flow.ternAck(p.ack(), p.flags());
        if ((p.flags() & TcpFlags.SYN) != 0) {
            flow.remoteSyn(p.seqStart());
        }
        final long seq = flow.remoteBase(p.flags()) + p.seqStart() + offset;
        header.write(flow.remotePort, flow.ternPort, (int) seq, (int) ack,
            headerLength, flags, p.window() < 0 ? 65535 : p.window());
        for (int i = 0; i < options.length; i++) {
            header.optionByte(i, options[i] & 0xFF);
        }
        // The data is the remote's pattern at each byte's sequence number, which read checks (ScriptPayload).
        final long first = seq + ((p.flags() & TcpFlags.SYN) != 0 ? 1 : 0);
        ScriptPayload.fill(MemorySegment.ofArray(segment), headerLength, length, first, ScriptPayload::remote);
        if (ipv6) {
            injectIp6(p.line(), NextHeader.TCP, segment, TcpHeader.CHECKSUM_OFFSET, p.ip());
            return;
        }
        TcpRepr.fillChecksum(header, remoteAddress, ternAddress, tcpLength);
        injectIp(p.line(), IpProtocol.TCP, segment, p.ip());
    }

    /** A datagram from the remote: to the current UDP flow's ports, or those the line names; its bytes the pattern. */
    private void inject(ScriptLine.Datagram d) {
        final int source = d.ports() != null ? d.ports().source() : udpRemotePort;
        final int destination = d.ports() != null ? d.ports().destination() : udpTernPort;
        final byte[] datagram = new byte[8 + d.length()];
        final java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(datagram);
        b.putShort((short) source).putShort((short) destination).putShort((short) datagram.length).putShort((short) 0);
        ScriptPayload.fill(MemorySegment.ofArray(datagram), 8, d.length(), 0, ScriptPayload::remoteDatagram);
        if (ipv6) {
            injectIp6(d.line(), NextHeader.UDP, datagram, UDP_CHECKSUM_OFFSET, d.ip());
            return;
        }
        final int checksum = InternetChecksum.finish(InternetChecksum.add(InternetChecksum.pseudoHeader(remoteAddress,
            ternAddress, IpProtocol.UDP, datagram.length), MemorySegment.ofArray(datagram), 0, datagram.length));
        b.putShort(6, (short) (checksum == 0 ? 0xFFFF : checksum));
        injectIp(d.line(), IpProtocol.UDP, datagram, d.ip());
    }

    /**
     * What an ICMP error from the remote quotes of a packet Tern sent: its transport header, the protocol and the
     * transport's length as the packet had it.
     */
    private record Quote(byte[] header, int protocol, int transportLength) {
    }

    /**
     * The first 20 bytes of the TCP header of a segment Tern sent (of the current TCP flow, or of the flow the quote's
     * ports name) or its UDP header (of the current UDP flow, or the quote's ports): more than the 8 bytes RFC 792
     * asks for, as routers send since RFC 1812 §4.3.2.3; ICMPv6 quotes as much as fits (RFC 4443 §3.1).
     */
    private Quote quote(ScriptLine.Icmp i) {
        switch (i.quoted()) {
            case ScriptLine.Packet p -> {
                final ScriptFlow flow = p.ports() != null ? flowOf(p.ports().source(), p.ports().destination())
                    : current;
                if (flow == null) {
                    throw failure(i.line(),
                        "the ICMP error quotes a TCP segment, but the script has no connection yet");
                }
                final byte[] inner = new byte[TcpHeader.MIN_LENGTH];
                final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(inner), 0, inner.length);
                header.write(flow.ternPort, flow.remotePort, (int) flow.ternSeq(p.seqStart()),
                    p.ack() < 0 ? 0 : (int) (flow.remoteBase(p.flags()) + p.ack()), TcpHeader.MIN_LENGTH,
                    p.flags() == 0 ? dev.tern.tcp.wire.TcpFlags.ACK : p.flags(), p.window() < 0 ? 65535 : p.window());
                return new Quote(inner, IpProtocol.TCP, TcpHeader.MIN_LENGTH + p.payloadLength());
            }
            case ScriptLine.Datagram d -> {
                final byte[] inner = new byte[UDP_HEADER];
                final int source = d.ports() != null ? d.ports().source() : udpTernPort;
                final int destination = d.ports() != null ? d.ports().destination() : udpRemotePort;
                java.nio.ByteBuffer.wrap(inner).putShort((short) source).putShort((short) destination)
                    .putShort((short) (UDP_HEADER + d.length())).putShort((short) 0);
                return new Quote(inner, IpProtocol.UDP, UDP_HEADER + d.length());
            }
            default -> throw failure(i.line(), "an ICMP error Tern receives must quote a TCP segment or a datagram");
        }
    }

    private static final int UDP_HEADER = 8;
    private static final int UDP_CHECKSUM_OFFSET = 6;
    private static final int ICMP_CHECKSUM_OFFSET = 2;

    /** An ICMP error from the remote, over the run's IP version, quoting the IP header Tern wrote and {@link #quote}. */
    private void inject(ScriptLine.Icmp i) {
        if (ipv6 ? !ScriptIcmp6.isError(i.type()) : !IcmpHeader.isError(i.type())) {
            injectIcmpQuery(i);
            return;
        }
        final Quote quote = quote(i);
        if (ipv6) {
            injectIcmp6Error(i, quote);
            return;
        }
        final byte[] message = new byte[IcmpHeader.LENGTH + Ipv4Header.MIN_LENGTH + quote.header.length];
        final java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(message);
        b.put((byte) i.type()).put((byte) i.code()).putShort((short) 0).putShort((short) 0)
            .putShort((short) Math.max(0, i.mtu()));
        final byte[] quotedIp = new byte[Ipv4Header.MIN_LENGTH];
        new Ipv4Repr(ternAddress, remoteAddress, quote.protocol, 64, 0, 0, 0x4000, quote.transportLength)
            .emit(new Ipv4Header().wrap(MemorySegment.ofArray(quotedIp), 0, quotedIp.length));
        b.put(quotedIp).put(quote.header);
        b.putShort(ICMP_CHECKSUM_OFFSET, (short) InternetChecksum.compute(MemorySegment.ofArray(message), 0,
            message.length));
        injectIp(i.line(), IpProtocol.ICMP, message, i.ip());
    }

    /**
     * An ICMPv6 error (RFC 4443 §3): the second word is Packet Too Big's MTU (0 for the other errors: unused, or a
     * parameter problem's pointer at the start), then Tern's IPv6 header as it went and the quote.
     */
    private void injectIcmp6Error(ScriptLine.Icmp i, Quote quote) {
        final byte[] message = new byte[Icmpv6Header.LENGTH + Ipv6Header.LENGTH + quote.header.length];
        final MemorySegment out = MemorySegment.ofArray(message);
        java.nio.ByteBuffer.wrap(message).put((byte) i.type()).put((byte) i.code()).putShort((short) 0)
            .putInt(i.mtu() == -1 ? 0 : i.mtu());
        new Ipv6Header().wrap(out, Icmpv6Header.LENGTH, Ipv6Header.LENGTH).write(0, 0, quote.transportLength,
            quote.protocol, 64, ScriptIpVersion.TERN_IPV6.high(), ScriptIpVersion.TERN_IPV6.low(),
            ScriptIpVersion.REMOTE_IPV6.high(), ScriptIpVersion.REMOTE_IPV6.low());
        System.arraycopy(quote.header, 0, message, Icmpv6Header.LENGTH + Ipv6Header.LENGTH, quote.header.length);
        injectIp6(i.line(), NextHeader.ICMPV6, message, ICMP_CHECKSUM_OFFSET, i.ip());
    }

    /**
     * An ICMP message that is not an error (an echo request, ...): {@code [raw (N)]} bytes with the header, the
     * identifier the line gives (else 0), sequence number 0 and the remote's datagram pattern as data.
     */
    private void injectIcmpQuery(ScriptLine.Icmp i) {
        final byte[] message = new byte[i.rawLength()];
        final java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(message);
        b.put((byte) i.type()).put((byte) i.code()).putShort((short) 0).putShort((short) Math.max(0, i.id()))
            .putShort((short) 0);
        ScriptPayload.fill(MemorySegment.ofArray(message), IcmpHeader.LENGTH, message.length - IcmpHeader.LENGTH, 0,
            ScriptPayload::remoteDatagram);
        if (ipv6) {
            injectIp6(i.line(), NextHeader.ICMPV6, message, ICMP_CHECKSUM_OFFSET, i.ip());
            return;
        }
        b.putShort(ICMP_CHECKSUM_OFFSET, (short) InternetChecksum.compute(MemorySegment.ofArray(message), 0,
            message.length));
        injectIp(i.line(), IpProtocol.ICMP, message, i.ip());
    }

    /** The IP fields a {@code >} line writes against Tern's packet, as packetdrill's verify_outbound_live_tos. */
    private static String ipMismatch(ScriptLine.IpFields ip, int tos, int ttl) {
        final int ecn = tos & 0b11;
        final String wrong = switch (ip.check()) {
            case NONE -> null;
            case EITHER_ECT -> ecn == 0b01 || ecn == 0b10 ? null : "ECN field " + ecnName(ecn) + ", not ECT(0) or ECT(1)";
            case ECN -> ecn == ip.value() ? null : "ECN field " + ecnName(ecn) + ", not " + ecnName(ip.value());
            case TOS -> tos == ip.value() ? null : String.format("TOS 0x%02x, not 0x%02x", tos, ip.value());
        };
        if (wrong != null) {
            return wrong;
        }
        return ip.ttl() == 0 || ip.ttl() == ttl ? null : "TTL " + ttl + ", not " + ip.ttl();
    }

    private static String ecnName(int ecn) {
        return switch (ecn) {
            case 0b01 -> "ECT(1)";
            case 0b10 -> "ECT(0)";
            case 0b11 -> "CE";
            default -> "Not-ECT";
        };
    }

    /**
     * A TCP segment, UDP datagram or ICMPv6 message from the remote over IPv6: the fixed header (the line's tos as
     * the traffic class, its ttl as the hop limit, 64 by default, its flow label) and the checksum at
     * {@code checksumOffset} over the IPv6 pseudo-header (RFC 8200 §8.1; a UDP sum of 0 is sent as all ones, since
     * 0 is no checksum, which IPv6 does not allow).
     */
    private void injectIp6(int line, int nextHeader, byte[] transport, int checksumOffset, ScriptLine.IpFields ip) {
        final byte[] packet = new byte[Ipv6Header.LENGTH + transport.length];
        if (packet.length > wire.mtu()) {
            throw failure(line, "the packet is " + packet.length + " bytes long with its IPv6 header, more than the "
                + "link's MTU of " + wire.mtu() + ": send it as several segments");
        }
        final MemorySegment out = MemorySegment.ofArray(packet);
        new Ipv6Header().wrap(out, 0, Ipv6Header.LENGTH).write(ip.tos(), ip.flowLabel(), transport.length, nextHeader,
            ip.ttl() == 0 ? 64 : ip.ttl(), ScriptIpVersion.REMOTE_IPV6.high(), ScriptIpVersion.REMOTE_IPV6.low(),
            ScriptIpVersion.TERN_IPV6.high(), ScriptIpVersion.TERN_IPV6.low());
        System.arraycopy(transport, 0, packet, Ipv6Header.LENGTH, transport.length);
        BigEndian.u16(out, Ipv6Header.LENGTH + checksumOffset, 0);
        final int checksum = InternetChecksum.finish(InternetChecksum.add(
            Ipv6Header.pseudoHeaderSum(out, 0, transport.length, nextHeader), out, Ipv6Header.LENGTH,
            transport.length));
        BigEndian.u16(out, Ipv6Header.LENGTH + checksumOffset,
            checksum == 0 && nextHeader == NextHeader.UDP ? 0xFFFF : checksum);
        inject(TERN_MAC, EtherType.IPV6, packet);
        poll();
    }

    private void injectIp(int line, int protocol, byte[] transport) {
        injectIp(line, protocol, transport, ScriptLine.IpFields.NONE);
    }

    private void injectIp(int line, int protocol, byte[] transport, ScriptLine.IpFields ip) {
        final byte[] packet = new byte[Ipv4Header.MIN_LENGTH + transport.length];
        if (packet.length > wire.mtu()) {
            // The wire is sized for the script's largest packet (ScriptWire) unless the profile's MTU is below the
            // stack's smallest.
            throw failure(line, "the packet is " + packet.length + " bytes long with its IPv4 header, more than the "
                + "link's MTU of " + wire.mtu() + ": send it as several segments");
        }
        new Ipv4Repr(remoteAddress, ternAddress, protocol, ip.ttl() == 0 ? 64 : ip.ttl(), ip.tos(), 0, 0x4000,
            transport.length).emit(new Ipv4Header().wrap(MemorySegment.ofArray(packet), 0, packet.length));
        System.arraycopy(transport, 0, packet, Ipv4Header.MIN_LENGTH, transport.length);
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
            if (now() < returnNs - tolerance(returnNs, now())) {
                throw failure(c.line(), c.name() + " returned " + result + " at once, at " + seconds(now())
                    + " s; the script says it blocks until " + seconds(returnNs) + " s");
            }
        }
        check(c, result);
        poll();
    }

    private void check(ScriptLine.Call c, Result result) {
        // EWOULDBLOCK is EAGAIN's other name on Linux and FreeBSD alike (one number).
        final Result expected = new Result(c.result(), "EWOULDBLOCK".equals(c.errno()) ? "EAGAIN" : c.errno());
        // As packetdrill: "= -1" without an errno compares the result only.
        final boolean anyErrno = c.result() == -1 && c.errno() == null;
        if (anyErrno ? result.value() != -1 : !result.equals(expected)) {
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
            return pend(c, ready, waitingFor, resume, Long.MAX_VALUE);
        }
        block(c, ready, waitingFor);
        return resume.get();
    }

    /** Whether {@code c} is the call now starting with a {@code START...END} time (it may stay pending). */
    boolean spans(ScriptLine.Call c) {
        return spanning == c;
    }

    /**
     * A call that spans time and cannot return yet becomes pending; the runner also wakes at script time
     * {@code wakeAtNs} (a poll's timeout), when {@code ready} may hold by time alone.
     */
    Result pend(ScriptLine.Call c, BooleanSupplier ready, String waitingFor, java.util.function.Supplier<Result> resume,
                long wakeAtNs) {
        if (ready.getAsBoolean()) {
            return resume.get();
        }
        final long returnNs = c.returnRelative() ? now() + c.returnNs() : c.returnNs();
        // As packetdrill: a blocking call's return is held to the share of its own span, from its start.
        pendings.add(new Pending(c, ready, resume, waitingFor, returnNs, wakeAtNs, tolerance(returnNs, now())));
        return Result.PENDING;
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
