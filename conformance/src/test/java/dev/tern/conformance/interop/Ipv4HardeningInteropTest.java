package dev.tern.conformance.interop;

import dev.tern.arp.wire.ArpPacket;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.IpProtocol;
import dev.tern.ipv4.wire.Ipv4Options;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.HostileIpv4;
import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpHeader;
import dev.tern.tcp.wire.TcpRepr;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

/**
 * Tern's IPv4 input checks (docs/DESIGN.md, "IPv4 input checks, in order") and two TCP ones against datagrams that
 * cross a real kernel path: a {@link CraftedHost} (a packet socket in the kernel peer's namespace, frames built with
 * the project's flyweights, no Python) sends each case from an address of its own, and sees on the peer's interface
 * what Tern sent back. The cases are the memory wire's ({@link HostileIpv4}, shared with {@code Ipv4HardeningTest}):
 * one per martian source class, one per malformed option kind, a completed loose and strict source route, Record
 * Route and Timestamp, a SYN with FIN, all as SYNs to a listening port (so a datagram that got through would draw a
 * SYN-ACK), and a SYN with MSS 0.
 *
 * <p>Per case: Tern's drop counters moved by exactly the one datagram, under the case's reason and no other; Tern's
 * answers, in order, are exactly the expected ones (none; an ICMP Parameter Problem with the pointer, quoting the
 * datagram; a SYN-ACK without IP options). "Nothing" is decided by an echo request the crafted host sends right after
 * the datagram: Tern handles frames in order and already knows the host's MAC (it answered the host's ARP request
 * first), so any answer to the datagram precedes the probe's reply. After the cases the kernel still pings Tern and
 * a kernel TCP client still sends it 1 MiB intact.
 *
 * <p>For the record, not as pass or fail: {@link #linuxAnswersTheSameDatagramsForTheRecord} sends the same datagrams
 * to the Linux kernel of the peer namespace (from a crafted host on Tern's end, to a {@code peer.py tcp-sink}
 * listening) and prints what it answered and which {@code /proc/net/snmp} and {@code /proc/net/netstat} counters
 * moved. On 6.18 with a namespace's defaults ({@code rp_filter} 0, {@code accept_source_route} 0,
 * {@code log_martians} 0); "PP n": ICMP Parameter Problem with pointer n, quoting the datagram:
 * <pre>
 * case                                  | Tern                                    | Linux 6.18
 * --------------------------------------+-----------------------------------------+---------------------------------------
 * source 0.0.0.0                        | dropped: martian_source_zero            | dropped, no MIB counter
 * source 0.1.2.3 (0/8)                  | dropped: martian_source_zero            | accepted; no route for the SYN-ACK
 * source 127.0.0.1, 127.200.0.9         | dropped: martian_source_loopback        | dropped, no MIB counter
 * source 255.255.255.255                | dropped: martian_source_broadcast       | dropped, no MIB counter
 * source 198.18.0.255 (subnet bcast)    | dropped: martian_source_broadcast       | accepted; SYN-ACK sent to 198.18.0.255
 * source 198.18.0.0 (subnet address)    | dropped: martian_source_broadcast       | not recorded
 * source 224.0.0.1, 239.1.2.3           | dropped: martian_source_multicast       | dropped, no MIB counter
 * source 240.0.0.1, 255.255.255.254     | dropped: martian_source_class_e         | accepted; no route for the SYN-ACK
 * source = receiver's address (land)    | dropped: martian_source_self            | dropped, no MIB counter
 * option length 0                       | PP 21 (length octet): option_bad_length | PP 20 (type octet), InHdrErrors
 * option length 1 (Router Alert)        | PP 22: option_bad_length                | PP 21, InHdrErrors
 * option past the header                | PP 21: option_past_header               | PP 20, InHdrErrors
 * no room for the length octet          | PP 23: option_past_header               | PP 23, InHdrErrors
 * record route pointer 3                | PP 22: option_bad_pointer               | PP 22, InHdrErrors
 * record route pointer mid-address      | PP 22: option_bad_pointer               | accepted: SYN-ACK
 * timestamp pointer 1                   | PP 22: option_bad_pointer               | PP 22, InHdrErrors
 * timestamp flag 5                      | PP 23: option_bad_timestamp_flag        | accepted: SYN-ACK, the option echoed
 * loose / strict route pointer 3 / 1    | PP 22 / PP 23: option_bad_pointer       | PP 22 / PP 23, InHdrErrors
 * record route twice                    | PP 23: option_duplicate                 | PP 23 (the first RR echoed in it)
 * loose / strict source route, complete | dropped: source_routed                  | dropped, no MIB counter
 * record route; timestamp               | SYN-ACK, no IP options                  | SYN-ACK echoing the option (12 bytes)
 * SYN+FIN to a listening port           | dropped: tcp.drop.syn_fin               | dropped, only Tcp.InSegs
 * SYN with MSS 0, 2000 bytes back       | 536+536+536+392; tcp.rx.bad_options     | 536+536+536+392, no counter
 * watcher's ID step over 20 others      | 1 (a counter per destination)           | 1 to 27 over five runs (random)
 * </pre>
 * Where they differ, docs/DESIGN.md ("IPv4 input: Tern and Linux") says why; nothing here is a Tern bug.
 */
class Ipv4HardeningInteropTest extends VethRigTest {
    private static final int PORT = 5001;
    private static final int ISS = 0x5EED_0000;
    private static final int FIRST_SOURCE_PORT = 40_000;
    private static final int PROBE_IDENTIFIER = 0x7E57;
    private static final int REPLY_BYTES = 2000;
    private static final long SECOND_NS = 1_000_000_000L;
    private static final Duration ANSWER_TIME = Duration.ofSeconds(5);
    private static final int IP = EthernetHeader.LENGTH;

    private CraftedHost crafted;
    private TcpListener listener;

    /**
     * One crafted datagram, as built for {@code receiver}: the counter Tern counts it under (null: accepted) and the
     * answers Tern sends, described as {@link #describe} does.
     */
    record Case(String what, Datagram datagram, String ternCounter, List<String> ternAnswers) {
    }

    /** Builds a case's datagram from {@code host} (the crafted host's address for this case), TCP port {@code port}. */
    @FunctionalInterface
    interface Datagram {
        byte[] build(int host, int port);
    }

    static List<Case> cases(int receiver) {
        final List<Case> cases = new ArrayList<>();
        for (HostileIpv4.MartianSource martian : HostileIpv4.martianSources(new InterfaceAddress(receiver, 24))) {
            cases.add(new Case("martian source: " + martian.what(),
                (host, port) -> tcp(martian.source(), receiver, port, TcpFlags.SYN, -1), "ipv4.drop." + martian.reason(),
                List.of()));
        }
        for (HostileIpv4.MalformedOption malformed : HostileIpv4.malformedOptions()) {
            cases.add(new Case("malformed: " + malformed.what(),
                (host, port) -> Frames.withOptions(tcp(host, receiver, port, TcpFlags.SYN, -1), malformed.options()),
                "ipv4.drop." + malformed.reason(), List.of("Parameter Problem, pointer " + malformed.pointer())));
        }
        final int[] receiverOctets = {receiver >>> 24, (receiver >>> 16) & 0xFF, (receiver >>> 8) & 0xFF, receiver & 0xFF};
        for (int type : new int[] {Ipv4Options.LOOSE_SOURCE_ROUTE, Ipv4Options.STRICT_SOURCE_ROUTE}) {
            // Completed (pointer past the length): the receiver was the route's last hop, the datagram's destination.
            cases.add(new Case((type == Ipv4Options.LOOSE_SOURCE_ROUTE ? "loose" : "strict") + " source route, completed",
                (host, port) -> Frames.withOptions(tcp(host, receiver, port, TcpFlags.SYN, -1), type, 7, 8, receiverOctets[0],
                    receiverOctets[1], receiverOctets[2], receiverOctets[3]), "ipv4.drop.source_routed", List.of()));
        }
        cases.add(new Case("record route, room for two addresses", (host, port) -> Frames.withOptions(
            tcp(host, receiver, port, TcpFlags.SYN, -1), Ipv4Options.RECORD_ROUTE, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0), null,
            List.of("SYN-ACK")));
        cases.add(new Case("timestamp, flag 0, room for two", (host, port) -> Frames.withOptions(
            tcp(host, receiver, port, TcpFlags.SYN, -1), Ipv4Options.TIMESTAMP, 12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0), null,
            List.of("SYN-ACK")));
        cases.add(new Case("SYN+FIN to a listening port", (host, port) -> tcp(host, receiver, port,
            TcpFlags.SYN | TcpFlags.FIN, -1), "tcp.drop.syn_fin", List.of()));
        return cases;
    }

    /** An option-less IPv4 datagram (DF, TTL 64) carrying one TCP segment to {@link #PORT} with sequence {@link #ISS}. */
    static byte[] tcp(int source, int destination, int sourcePort, int flags, int mss) {
        return tcp(source, destination, new TcpRepr(sourcePort, PORT, ISS, 0, flags, 65535, mss, -1, false, false, 0, 0,
            new int[0], 0));
    }

    static byte[] tcp(int source, int destination, TcpRepr repr) {
        final byte[] segment = new byte[repr.headerLength()];
        final TcpHeader header = new TcpHeader().wrap(MemorySegment.ofArray(segment), 0, segment.length);
        repr.emit(header);
        TcpRepr.fillChecksum(header, source, destination, segment.length);
        return Frames.ipv4(source, destination, IpProtocol.TCP, repr.sourcePort(), 0x4000, 64, segment);
    }

    /** A RST from {@code host} that ends the half-open connection a case opened (RFC 9293 §3.10.7.3). */
    private static byte[] reset(int host, int receiver, int port, int seq) {
        return tcp(host, receiver, new TcpRepr(port, PORT, seq, 0, TcpFlags.RST, 0, -1, -1, false, false, 0, 0,
            new int[0], 0));
    }

    private static byte[] probe(int host, int receiver, int sequence) {
        return Frames.ipv4(host, receiver, IpProtocol.ICMP, sequence, 0, 64,
            Frames.echoRequest(PROBE_IDENTIFIER, sequence, new byte[16]));
    }

    private static boolean isProbeReply(CapturedFrame frame, int receiver, int sequence) {
        final int icmp = IP + (frame.u8(IP) & 0x0F) * 4;
        return frame.icmpType() == IcmpHeader.ECHO_REPLY && frame.i32(IP + 12) == receiver
            && frame.u16(icmp + 4) == PROBE_IDENTIFIER && frame.u16(icmp + 6) == sequence;
    }

    /** What one datagram drew from the receiver: its IPv4 frames before the probe's reply (IGMP aside), and that reply. */
    record Exchange(List<CapturedFrame> answers, CapturedFrame probeReply) {
        int probeReplyIdentification() {
            return probeReply.u16(IP + 4);
        }
    }

    /**
     * The crafted host at {@code host} introduces itself by ARP (and waits for the receiver's ARP reply), sends
     * {@code datagram} (unless null), then a probe echo request with {@code sequence}, and collects what came back up
     * to the probe's reply.
     */
    private Exchange exchange(long receiverMac, int receiver, int host, byte[] datagram, int sequence) {
        crafted.announce(host, receiver);
        crafted.receiveThrough(f -> f.arpOperation() == ArpPacket.OPERATION_REPLY && f.arpSenderIp() == receiver && f.arpTargetIp() == host,
            ANSWER_TIME, "ARP reply from " + Ipv4Address.format(receiver));
        if (datagram != null) {
            crafted.sendIpv4(receiverMac, datagram);
        }
        crafted.sendIpv4(receiverMac, probe(host, receiver, sequence));
        final List<CapturedFrame> frames = crafted.receiveThrough(f -> isProbeReply(f, receiver, sequence), ANSWER_TIME,
            "reply to the probe after the datagram");
        return new Exchange(frames.subList(0, frames.size() - 1).stream()
            .filter(f -> f.source() == receiverMac && f.isIpv4() && f.ipProtocol() != IpProtocol.IGMP).toList(),
            frames.getLast());
    }

    /**
     * One answer in words: "Parameter Problem, pointer 22", "SYN-ACK", "RST", "echo reply", ...; then what is unusual
     * about it: IP options, another destination than {@code host}, a Parameter Problem not quoting {@code sent}.
     */
    static String describe(CapturedFrame frame, int host, byte[] sent) {
        final int headerLength = (frame.u8(IP) & 0x0F) * 4;
        final int at = IP + headerLength;
        String what = switch (frame.ipProtocol()) {
            case IpProtocol.ICMP -> switch (frame.icmpType()) {
                case IcmpHeader.PARAMETER_PROBLEM -> "Parameter Problem, pointer " + frame.u8(at + 4)
                    + (quotes(frame, at + IcmpHeader.LENGTH, sent) ? "" : " (not quoting the datagram)");
                case IcmpHeader.ECHO_REPLY -> "echo reply";
                default -> "ICMP type " + frame.icmpType() + " code " + frame.u8(at + 1);
            };
            case IpProtocol.TCP -> describeTcp(TcpFrame.parse(frame));
            default -> "protocol " + frame.ipProtocol();
        };
        if (headerLength > 20) {
            what += " with " + (headerLength - 20) + " bytes of IP options";
        }
        final int destination = frame.i32(IP + 16);
        return destination == host ? what : what + " to " + Ipv4Address.format(destination);
    }

    private static boolean quotes(CapturedFrame frame, int at, byte[] sent) {
        return frame.length() >= at + sent.length
            && Arrays.equals(Arrays.copyOfRange(frame.bytes(), at, at + sent.length), sent);
    }

    private static String describeTcp(TcpFrame segment) {
        final String flags = segment.has(TcpFrame.SYN) ? (segment.has(TcpFrame.ACK) ? "SYN-ACK" : "SYN")
            : segment.has(TcpFrame.RST) ? (segment.has(TcpFrame.ACK) ? "RST-ACK" : "RST")
            : segment.has(TcpFrame.FIN) ? "FIN-ACK" : "ACK";
        return segment.dataLength() > 0 ? flags + " " + segment.dataLength() + " bytes" : flags;
    }

    private static List<String> describeAll(List<CapturedFrame> frames, int host, byte[] sent) {
        return frames.stream().map(f -> describe(f, host, sent)).toList();
    }

    private static int hostFor(int index) {
        return CraftedHost.FIRST_ADDRESS + 1 + index;
    }

    // ------------------------------------------------------------------------------------------------ Tern

    /** Every non-zero drop counter of Tern's stack, and {@code tcp.rx.bad_options} (the MSS floor's). */
    private Map<String, Long> ternDropCounters() {
        final Map<String, Long> drops = new TreeMap<>(rig.countersContaining(".drop."));
        drops.putAll(rig.countersContaining("tcp.rx.bad_options"));
        return drops;
    }

    /** By how much each counter of {@code after} exceeds its value in {@code before} (absent: 0); non-zero ones only. */
    private static Map<String, Long> growth(Map<String, Long> before, Map<String, Long> after) {
        final Map<String, Long> grown = new TreeMap<>();
        after.forEach((name, value) -> {
            final long delta = value - before.getOrDefault(name, 0L);
            if (delta != 0) {
                grown.put(name, delta);
            }
        });
        return grown;
    }

    @TestFactory
    Stream<DynamicTest> ternCountsDropsAndAnswersEachCraftedDatagramAsOnTheMemoryWire() throws Exception {
        rig = VethRig.create(VethSetup.DEFAULT);
        // A fixed identification key: whether two hosts share one of the 2048 ID counters (1 pair in 2048) is then
        // decided once, not by each run's random key.
        final NetStack stack = rig.startTernRunner(builder -> builder.ipv4(Ipv4Config.DEFAULT.withIdentificationKey(
            0x7E57_1D5L, 0x7739L)));
        listener = stack.listen(PORT, 16);
        crafted = CraftedHost.onPeerEnd(rig.net());
        final List<Case> cases = cases(TERN_IPV4);
        return Stream.concat(
            IntStream.range(0, cases.size())
                .mapToObj(i -> dynamicTest(cases.get(i).what(), () -> ternCase(i, cases.get(i)))),
            Stream.of(
                dynamicTest("a SYN with MSS 0: Tern sends 536-byte segments", () -> ternMssZero(cases.size())),
                dynamicTest("IP IDs per destination: replies to one host do not move another's",
                    () -> ternIdentificationPerDestination(cases.size() + 1)),
                dynamicTest("afterwards the kernel pings Tern and sends it 1 MiB over TCP", this::ternStillServesTheKernel)));
    }

    private void ternCase(int index, Case c) {
        final int host = hostFor(index);
        final byte[] datagram = c.datagram().build(host, FIRST_SOURCE_PORT + index);
        final Map<String, Long> before = ternDropCounters();
        final List<CapturedFrame> answers = exchange(rig.ternMac(), TERN_IPV4, host, datagram, index).answers();
        final Map<String, Long> grown = growth(before, ternDropCounters());

        assertEquals(c.ternAnswers(), describeAll(answers, host, datagram), c.what() + ": what Tern sent back");
        assertEquals(c.ternCounter() == null ? Map.of() : Map.of(c.ternCounter(), 1L), grown,
            c.what() + ": Tern's drop counters moved by this one datagram, under its reason only");
        if (c.ternAnswers().contains("SYN-ACK")) {
            crafted.sendIpv4(rig.ternMac(), reset(host, TERN_IPV4, FIRST_SOURCE_PORT + index, ISS + 1));
        }
    }

    /**
     * RFC 9293 §3.7.1 gives no MSS of 0 a meaning; Tern takes it as absent (536, RFC 1122 §4.2.2.6), as Linux does,
     * and counts it in {@code tcp.rx.bad_options}. Seen in the segments: 2000 bytes leave as 536 + 536 + 536 + 392.
     */
    private void ternMssZero(int index) throws Exception {
        final int host = hostFor(index);
        final int port = FIRST_SOURCE_PORT + index;
        final long badOptionsBefore = rig.counter("tcp.rx.bad_options");
        final TcpFrame synAck = handshakeWithMssZero(rig.ternMac(), TERN_IPV4, host, port, 0);
        final TcpConnection connection = listener.accept(5 * SECOND_NS);
        assertNotNull(connection, "Tern accepted the connection");
        final byte[] data = Frames.pattern(REPLY_BYTES, 7);
        assertEquals(REPLY_BYTES, connection.write(MemorySegment.ofArray(data), 0, data.length));
        final List<Integer> sizes = dataSegmentSizes(rig.ternMac(), host, synAck.seq() + 1, false);
        connection.abort();

        assertEquals(List.of(536, 536, 536, 392), sizes, "Tern cut 2000 bytes at 536, RFC 1122's default MSS");
        assertEquals(1, rig.counter("tcp.rx.bad_options") - badOptionsBefore);
    }

    /**
     * From {@code host}: a SYN with MSS 0, then (after the receiver's SYN-ACK) the ACK with {@code extraFlags}
     * ({@link TcpFrame#FIN} to close our half at once). Returns the SYN-ACK.
     */
    private TcpFrame handshakeWithMssZero(long receiverMac, int receiver, int host, int port, int extraFlags) {
        crafted.announce(host, receiver);
        crafted.sendIpv4(receiverMac, tcp(host, receiver, port, TcpFlags.SYN, 0));
        final CapturedFrame answer = crafted.receiveThrough(f -> TcpFrame.is(f) && f.source() == receiverMac
            && TcpFrame.parse(f).destinationPort() == port, ANSWER_TIME, "SYN-ACK").getLast();
        final TcpFrame synAck = TcpFrame.parse(answer);
        assertEquals(TcpFrame.SYN | TcpFrame.ACK, synAck.flags() & (TcpFrame.SYN | TcpFrame.ACK | TcpFrame.RST),
            synAck.toString());
        crafted.sendIpv4(receiverMac, tcp(host, receiver, new TcpRepr(port, PORT, ISS + 1, (int) synAck.seq() + 1,
            TcpFlags.ACK | extraFlags, 65535, -1, -1, false, false, 0, 0, new int[0], 0)));
        return synAck;
    }

    /** Sizes of the data segments to {@code host}, in order, until {@link #REPLY_BYTES} arrived (and the FIN, if asked). */
    private List<Integer> dataSegmentSizes(long senderMac, int host, long firstSeq, boolean throughFin) {
        final List<Integer> sizes = new ArrayList<>();
        final Map<Long, Integer> bySeq = new HashMap<>();
        final boolean[] finSeen = {false};
        crafted.receiveThrough(f -> {
            if (!TcpFrame.is(f) || f.source() != senderMac || f.i32(IP + 16) != host) {
                return false;
            }
            final TcpFrame segment = TcpFrame.parse(f);
            if (segment.dataLength() > 0 && bySeq.putIfAbsent(segment.seq(), segment.dataLength()) == null) {
                sizes.add(segment.dataLength()); // a retransmission is not counted twice
            }
            finSeen[0] |= segment.has(TcpFrame.FIN);
            final int total = sizes.stream().mapToInt(Integer::intValue).sum();
            return total >= REPLY_BYTES && (!throughFin || finSeen[0]);
        }, ANSWER_TIME, REPLY_BYTES + " bytes of data" + (throughFin ? " and a FIN" : ""));
        assertEquals(firstSeq, bySeq.keySet().stream().mapToLong(Long::longValue).min().orElse(-1),
            "data starts right after the SYN");
        return sizes;
    }

    /**
     * RFC 7739 §4's idle scan, seen from two crafted hosts: the watcher's two echo replies carry consecutive IDs
     * although Tern answered 20 echoes of another host between them (RFC 7739 §5.3, one counter per destination).
     */
    private void ternIdentificationPerDestination(int index) {
        assertEquals(List.of(1), identificationSteps(rig.ternMac(), TERN_IPV4, index),
            "the watcher's IDs advance by one: 20 replies to another host left no trace");
    }

    /**
     * Echoes from a watcher ({@code hostFor(index)}), 20 from another host, and the watcher again: how far the
     * watcher's reply ID moved between its two replies (one element, modulo 2^16).
     */
    private List<Integer> identificationSteps(long receiverMac, int receiver, int index) {
        final int watcher = hostFor(index);
        final int other = hostFor(index + 1);
        final int first = exchange(receiverMac, receiver, watcher, null, 1000).probeReplyIdentification();
        for (int i = 0; i < 20; i++) {
            exchange(receiverMac, receiver, other, null, 1001 + i);
        }
        final int second = exchange(receiverMac, receiver, watcher, null, 1021).probeReplyIdentification();
        return List.of((second - first) & 0xFFFF);
    }

    private void ternStillServesTheKernel() throws Exception {
        final KernelPeer.PingOutcome ping = rig.kernel().ping(3, 56, 0.2);
        assertEquals(3, ping.received(), ping.output());

        final long bytes = 1L << 20;
        final long deadline = System.nanoTime() + 20 * SECOND_NS;
        final BackgroundCommand source = rig.kernel().launchPeerPy("tcp-source", NetnsHarness.TERN_ADDRESS,
            Integer.toString(PORT), Long.toString(bytes), "20");
        final TcpConnection connection = listener.accept(10 * SECOND_NS);
        assertNotNull(connection, "the kernel connected: " + source.stdout() + source.stderr());
        final TcpStreams.Result received = TcpStreams.receive(connection, bytes, deadline);
        connection.shutdownOutput();
        source.awaitExit(Duration.ofSeconds(20));
        connection.close();
        assertEquals("sent " + bytes + " " + received.sha256(), KernelPeer.line(source.stdout(), "sent"),
            "Tern received every byte the kernel sent, in order: " + source.stdout() + source.stderr());
        assertEquals(0, rig.counter("stack.internal_errors"));
    }

    // ------------------------------------------------------------------------------------------------ Linux

    /**
     * The same datagrams to the Linux kernel of the peer namespace (198.18.0.1), from a crafted host on Tern's end of
     * the pair, with a {@code peer.py tcp-sink} listening on the port; prints one table row per case: what the kernel
     * sent back and which MIB counters moved (beyond what the ARP and probe exchange alone moves, measured first).
     * Nothing here is asserted about the kernel's choices; only that every probe was answered (the kernel kept
     * working) and that the MSS 0 handshake completed.
     */
    @Test
    void linuxAnswersTheSameDatagramsForTheRecord() {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand sink = rig.kernel().startPeerPy("tcp-sink", Integer.toString(PORT), "30",
            Integer.toString(REPLY_BYTES));
        crafted = CraftedHost.onTernEnd(rig.net());
        final long linuxMac = rig.net().peerMac();
        final int baselineHost = CraftedHost.FIRST_ADDRESS;
        final Map<String, Long> beforeBaseline = rig.kernel().snmp();
        exchange(linuxMac, PEER_IPV4, baselineHost, null, 0xFFFF);
        final Map<String, Long> baseline = growth(beforeBaseline, rig.kernel().snmp());

        final List<Case> cases = cases(PEER_IPV4);
        final List<String> rows = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            final int host = hostFor(i);
            final byte[] datagram = cases.get(i).datagram().build(host, FIRST_SOURCE_PORT + i);
            final Map<String, Long> before = rig.kernel().snmp();
            final List<String> answers = describeAll(exchange(linuxMac, PEER_IPV4, host, datagram, i).answers(), host,
                datagram);
            // Less what the ARP and probe exchange alone moves.
            final Map<String, Long> moved = growth(baseline, growth(before, rig.kernel().snmp()));
            if (answers.stream().anyMatch(a -> a.startsWith("SYN-ACK"))) {
                crafted.sendIpv4(linuxMac, reset(host, PEER_IPV4, FIRST_SOURCE_PORT + i, ISS + 1));
            }
            rows.add(row(cases.get(i).what(), answers, moved));
        }

        final int index = cases.size();
        final int host = hostFor(index);
        final Map<String, Long> before = rig.kernel().snmp();
        final TcpFrame synAck = handshakeWithMssZero(linuxMac, PEER_IPV4, host, FIRST_SOURCE_PORT + index, TcpFlags.FIN);
        final List<Integer> sizes = dataSegmentSizes(linuxMac, host, synAck.seq() + 1, true);
        final Map<String, Long> moved = growth(before, rig.kernel().snmp());
        crafted.sendIpv4(linuxMac, reset(host, PEER_IPV4, FIRST_SOURCE_PORT + index, ISS + 2));
        rows.add(row("a SYN with MSS 0", List.of("SYN-ACK, then data in segments of " + sizes), moved));
        rows.add(row("IP IDs: a watcher's step over 20 replies to another host", identificationSteps(linuxMac, PEER_IPV4,
            index + 1).stream().map(String::valueOf).toList(), Map.of()));
        sink.awaitExit(Duration.ofSeconds(10));

        System.out.println("case | Linux answered | Linux counters moved");
        rows.forEach(System.out::println);
    }

    private static String row(String what, List<String> answers, Map<String, Long> moved) {
        return what + " | " + (answers.isEmpty() ? "nothing" : String.join(", ", answers)) + " | "
            + (moved.isEmpty() ? "none" : moved.toString());
    }
}
