package dev.tern.stack;

import dev.tern.core.net.Ipv6Address;
import dev.tern.core.net.Ipv6InterfaceAddress;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.Ipv6Frames;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static dev.tern.stack.testing.Ipv6Frames.ECHO_REPLY;
import static dev.tern.stack.testing.Ipv6Frames.ECHO_REQUEST;
import static dev.tern.stack.testing.Ipv6Frames.NA;
import static dev.tern.stack.testing.Ipv6Frames.NS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IPv6, ICMPv6 and neighbour discovery as a peer played by the test sees them on the wire (RFC 8200, RFC 4443,
 * RFC 4861, RFC 4862 §5.4): every frame the stack sends is decoded here, byte by byte.
 */
class Ipv6Test {
    private static final long SECOND = 1_000_000_000L;
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final Ipv6Address US = Ipv6Address.parse("2001:db8::2");
    private static final Ipv6Address PEER = Ipv6Address.parse("2001:db8::1");
    private static final Ipv6Address SOLICITED_US = US.solicitedNode();
    private static final int NA_SOLICITED_OVERRIDE = 0x6000_0000;
    private static final int ROUTER_SOLICITATION = 133;
    private static final int ROUTER_ADVERTISEMENT = 134;

    private Simulation sim;
    private NetStack stack;
    private PeerPort peer;
    private Ipv6Address linkLocal;

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        peer = new PeerPort(sim, "peer", PEER_MAC);
        stack = sim.addStack("us", "198.18.0.2/24",
            b -> b.ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse("2001:db8::2/64")))));
        linkLocal = Ipv6Address.linkLocal(stack.macAddress());
    }

    @AfterEach
    void tearDown() {
        sim.close();
    }

    private long counter(String label) {
        return stack.counters().value(label);
    }

    /** The IPv6 packets the peer received since the last call (Ethernet header stripped), MLD's aside. */
    private List<byte[]> ipv6Seen() {
        return seen(false);
    }

    /** Only the MLD messages (behind their hop-by-hop header) the peer received since the last call. */
    private List<byte[]> mldSeen() {
        return seen(true);
    }

    private List<byte[]> seen(boolean mld) {
        final List<byte[]> packets = peer.drain(f -> f.etherType() == EtherType.IPV6).stream()
            .map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length))
            .filter(p -> (p[6] == 0) == mld && (mld || icmpType(p) != ROUTER_SOLICITATION)).toList();
        peer.clear();
        return packets;
    }

    private static Ipv6Address source(byte[] p) {
        final ByteBuffer b = ByteBuffer.wrap(p);
        return new Ipv6Address(b.getLong(8), b.getLong(16));
    }

    private static Ipv6Address destination(byte[] p) {
        final ByteBuffer b = ByteBuffer.wrap(p);
        return new Ipv6Address(b.getLong(24), b.getLong(32));
    }

    private static Ipv6Address target(byte[] p) {
        final ByteBuffer b = ByteBuffer.wrap(p);
        return new Ipv6Address(b.getLong(48), b.getLong(56));
    }

    private static int hopLimit(byte[] p) {
        return p[7] & 0xff;
    }

    private static int icmpType(byte[] p) {
        return p[6] == Ipv6Frames.ICMPV6 ? p[40] & 0xff : -1;
    }

    private static int word(byte[] p) {
        return ByteBuffer.wrap(p).getInt(44);
    }

    /** Passes DAD (one solicitation per address, a second of silence) and forgets what was sent. */
    private void upAndQuiet() {
        sim.runFor(2 * SECOND);
        peer.clear();
    }

    private void send(Ipv6Address from, Ipv6Address to, long dstMac, int hopLimit, int type, int code, int word,
                      byte[] body) {
        peer.send(Ipv6Frames.frame(dstMac, PEER_MAC, Ipv6Frames.icmpPacket(from, to, hopLimit, type, code, word, body)));
    }

    /** The peer makes itself known as a solicitation does (RFC 4861 §7.2.3), so replies need no resolution. */
    private void introducePeer() {
        send(PEER, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0,
            Ipv6Frames.ndBody(US, 1, PEER_MAC));
        sim.runFor(SECOND / 10);
        peer.clear();
    }

    @Test
    void checksEveryAddressForDuplicatesBeforeUsingIt() {
        sim.runFor(SECOND / 2);
        final List<byte[]> sent = ipv6Seen();
        assertEquals(2, sent.size(), "one DAD solicitation per address");
        for (byte[] p : sent) {
            // RFC 4862 §5.4.2: from ::, to the solicited-node group of the target, hop limit 255, no source option.
            assertEquals(Ipv6Address.UNSPECIFIED, source(p));
            assertEquals(NS, icmpType(p));
            assertEquals(255, hopLimit(p));
            assertEquals(target(p).solicitedNode(), destination(p));
            assertEquals(40 + 24, p.length, "no link-layer option from the unspecified address");
            assertTrue(Ipv6Frames.checksumHolds(p));
        }
        assertEquals(List.of(linkLocal, US), sent.stream().map(Ipv6Test::target).toList());
        assertEquals(0, counter("nd.dad.completed"));
        // A solicitation for a tentative address is not answered (§5.4.3) ...
        send(PEER, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0,
            Ipv6Frames.ndBody(US, 1, PEER_MAC));
        sim.runFor(SECOND / 10);
        assertEquals(List.of(), ipv6Seen());
        // ... and after a RetransTimer of silence both addresses are in use.
        sim.runFor(SECOND);
        assertEquals(2, counter("nd.dad.completed"));
        assertEquals(List.of("fe80::ff:fe00:1/64 preferred", "2001:db8::2/64 preferred"),
            stack.ipv6().addresses().describe());
    }

    @Test
    void anAdvertisementForATentativeAddressMakesItADuplicateNeverUsed() {
        sim.runFor(SECOND / 2);
        peer.clear();
        // Another node holds 2001:db8::2 and answers our DAD (RFC 4862 §5.4.4).
        send(US, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 255, NA, 0, 0x2000_0000,
            Ipv6Frames.ndBody(US, 2, PEER_MAC));
        sim.runFor(2 * SECOND);
        assertEquals(1, counter("nd.dad.duplicates"));
        assertEquals(1, counter("nd.dad.completed")); // the link-local one
        assertEquals("2001:db8::2/64 duplicate", stack.ipv6().addresses().describe().get(1));
        peer.clear();
        send(PEER, US, stack.macAddress(), 64, ECHO_REQUEST, 0, 0x1234_0001, new byte[8]);
        sim.runFor(SECOND);
        assertEquals(List.of(), ipv6Seen(), "a duplicate address answers nothing");
        assertEquals(1, counter("ipv6.drop.not_ours"));
    }

    @Test
    void answersASolicitationWithAnExactAdvertisementAndLearnsTheSender() {
        upAndQuiet();
        send(PEER, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0,
            Ipv6Frames.ndBody(US, 1, PEER_MAC));
        sim.runFor(SECOND / 10);
        final List<PeerPort.Received> frames = peer.drain(f -> f.etherType() == EtherType.IPV6);
        assertEquals(1, frames.size());
        // RFC 4861 §7.2.4: unicast to the solicitation's source, solicited and override, our MAC as the target's.
        final byte[] expected = Ipv6Frames.frame(PEER_MAC, stack.macAddress(),
            Ipv6Frames.icmpPacket(US, PEER, 255, NA, 0, NA_SOLICITED_OVERRIDE, Ipv6Frames.ndBody(US, 2,
                stack.macAddress())));
        assertArrayEquals(expected, frames.get(0).bytes());
        peer.clear();
        // Learnt STALE from the option (§7.2.3), then used at once for the answer: DELAY (§7.3.3), as Linux.
        assertEquals("DELAY", stack.ipv6().neighbours().stateOf(PEER.high(), PEER.low()));
        assertEquals(PEER_MAC, stack.ipv6().neighbours().peek(PEER.high(), PEER.low()));
        // Unconfirmed after DELAY_FIRST_PROBE_TIME: unicast probes to the cached MAC (PROBE), then forgotten.
        sim.runFor(5 * SECOND + SECOND / 2);
        final List<PeerPort.Received> probes = peer.drain(f -> f.etherType() == EtherType.IPV6
            && (f.bytes()[14 + 40] & 0xff) == NS);
        assertEquals(1, probes.size());
        assertEquals(PEER_MAC, ByteBuffer.wrap(probes.get(0).bytes()).getLong(0) >>> 16, "unicast to the cached MAC");
        assertEquals(NS, probes.get(0).bytes()[14 + 40] & 0xff);
        assertEquals(PEER, destination(Arrays.copyOfRange(probes.get(0).bytes(), 14, probes.get(0).bytes().length)));
        assertEquals("PROBE", stack.ipv6().neighbours().stateOf(PEER.high(), PEER.low()));
        sim.runFor(3 * SECOND);
        assertEquals("NONE", stack.ipv6().neighbours().stateOf(PEER.high(), PEER.low()));
    }

    @Test
    void answersAnEchoRequestWithTheSameDataAfterResolvingThePeer() {
        upAndQuiet();
        final byte[] data = Frames.pattern(100, 7);
        send(PEER, US, stack.macAddress(), 64, ECHO_REQUEST, 0, 0x4321_0005, data);
        sim.runFor(SECOND / 10);
        // No entry for the peer yet: a multicast solicitation with our MAC goes out first (RFC 4861 §7.2.2).
        List<byte[]> sent = ipv6Seen();
        assertEquals(1, sent.size());
        assertEquals(NS, icmpType(sent.get(0)));
        assertEquals(US, source(sent.get(0)));
        assertEquals(PEER.solicitedNode(), destination(sent.get(0)));
        assertEquals(PEER, target(sent.get(0)));
        assertEquals(40 + 32, sent.get(0).length, "with a source link-layer option");
        assertEquals(3, counter("nd.tx.solicitations"), "two for DAD, this one");
        send(PEER, US, stack.macAddress(), 255, NA, 0, NA_SOLICITED_OVERRIDE, Ipv6Frames.ndBody(PEER, 2, PEER_MAC));
        sim.runFor(SECOND / 10);
        sent = ipv6Seen();
        assertEquals(1, sent.size(), "the waiting reply leaves once the peer is known");
        final byte[] reply = sent.get(0);
        assertEquals(ECHO_REPLY, icmpType(reply));
        assertEquals(US, source(reply));
        assertEquals(PEER, destination(reply));
        assertEquals(64, hopLimit(reply));
        assertEquals(0x4321_0005, word(reply));
        assertArrayEquals(data, Arrays.copyOfRange(reply, 48, reply.length));
        assertTrue(Ipv6Frames.checksumHolds(reply));
        assertEquals("REACHABLE", stack.ipv6().neighbours().stateOf(PEER.high(), PEER.low()));
        assertEquals(1, counter("icmp6.tx.echo_replies"));
        assertEquals(1, counter("nd.pending.sent"));
    }

    @Test
    void aNeighbourThatNeverAnswersIsSolicitedThreeTimesThenForgotten() {
        upAndQuiet();
        send(PEER, US, stack.macAddress(), 64, ECHO_REQUEST, 0, 1, new byte[4]);
        sim.runFor(5 * SECOND);
        final List<byte[]> sent = ipv6Seen();
        assertEquals(3, sent.size(), "MAX_MULTICAST_SOLICIT solicitations, RetransTimer apart");
        sent.forEach(p -> assertEquals(NS, icmpType(p)));
        assertEquals(1, counter("nd.resolve_failed"));
        assertEquals("NONE", stack.ipv6().neighbours().stateOf(PEER.high(), PEER.low()));
    }

    @Test
    void refusesNeighbourDiscoveryFromOffTheLinkAndMalformedMessages() {
        upAndQuiet();
        // RFC 4861 §7.1.1: a hop limit below 255 means a router forwarded it.
        send(PEER, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 64, NS, 0, 0,
            Ipv6Frames.ndBody(US, 1, PEER_MAC));
        // A zero-length option.
        final byte[] zeroOption = Ipv6Frames.ndBody(US, 1, PEER_MAC);
        zeroOption[17] = 0;
        send(PEER, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0, zeroOption);
        // A multicast target.
        send(PEER, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0,
            Ipv6Frames.ndBody(Ipv6Address.ALL_NODES, 1, PEER_MAC));
        // DAD's solicitation (from ::) with a source link-layer option.
        send(Ipv6Address.UNSPECIFIED, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0,
            Ipv6Frames.ndBody(US, 1, PEER_MAC));
        // An advertisement to all nodes that claims to be solicited.
        send(PEER, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 255, NA, 0, NA_SOLICITED_OVERRIDE,
            Ipv6Frames.ndBody(PEER, 2, PEER_MAC));
        sim.runFor(SECOND);
        assertEquals(List.of(), ipv6Seen());
        assertEquals(1, counter("nd.drop.hop_limit"));
        assertEquals(4, counter("nd.drop.invalid"));
        assertEquals("NONE", stack.ipv6().neighbours().stateOf(PEER.high(), PEER.low()));
    }

    @Test
    void answersDadOfAnAddressInUseToAllNodes() {
        upAndQuiet();
        send(Ipv6Address.UNSPECIFIED, SOLICITED_US, Ipv6Address.multicastMac(SOLICITED_US.low()), 255, NS, 0, 0,
            Ipv6Frames.ndBody(US, 1, -1));
        sim.runFor(SECOND / 10);
        final List<byte[]> sent = ipv6Seen();
        assertEquals(1, sent.size());
        assertEquals(NA, icmpType(sent.get(0)));
        assertEquals(Ipv6Address.ALL_NODES, destination(sent.get(0)));
        assertEquals(0x2000_0000, word(sent.get(0)), "override, not solicited (RFC 4861 §7.2.4)");
    }

    @Test
    void badPacketsAreCountedAndDroppedAndErrorsGoBackAsRfc4443Says() {
        upAndQuiet();
        introducePeer();
        // A bad ICMPv6 checksum.
        final byte[] bad = Ipv6Frames.icmpPacket(PEER, US, 64, ECHO_REQUEST, 0, 1, new byte[8]);
        bad[42] ^= 1;
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, bad));
        // To an address that is not ours, and from a multicast source.
        send(PEER, Ipv6Address.parse("2001:db8::99"), stack.macAddress(), 64, ECHO_REQUEST, 0, 1, new byte[8]);
        send(Ipv6Address.ALL_NODES, US, stack.macAddress(), 64, ECHO_REQUEST, 0, 1, new byte[8]);
        // A payload length beyond the frame, and IP version 4 in an IPv6 frame.
        final byte[] longer = Ipv6Frames.icmpPacket(PEER, US, 64, ECHO_REQUEST, 0, 1, new byte[8]);
        longer[5] = (byte) 200;
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, longer));
        final byte[] version = Ipv6Frames.icmpPacket(PEER, US, 64, ECHO_REQUEST, 0, 1, new byte[8]);
        version[0] = 0x40;
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, version));
        sim.runFor(SECOND / 10);
        assertEquals(List.of(), ipv6Seen());
        assertEquals(1, counter("icmp6.drop.bad_checksum"));
        assertEquals(1, counter("ipv6.drop.not_ours"));
        assertEquals(1, counter("ipv6.drop.bad_source"));
        assertEquals(1, counter("ipv6.drop.bad_payload_length"));
        assertEquals(1, counter("ipv6.drop.bad_version"));

        // An unknown next header: parameter problem, code 1, pointing at the Next Header field (RFC 8200 §4).
        final byte[] unknown = Ipv6Frames.packet(PEER, US, 253, 64, new byte[8]);
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, unknown));
        // A destination option of type 0xC2 (top bits 11: discard and report): code 2, pointing at the option.
        final byte[] options = Ipv6Frames.packet(PEER, US, 60, 64, new byte[]{59, 0, (byte) 0xC2, 4, 0, 0, 0, 0});
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, options));
        // A routing header with segments left: code 0, pointing at Segments Left... at the routing type (§4.4).
        final byte[] routing = Ipv6Frames.packet(PEER, US, 43, 64, new byte[]{59, 0, 4, 1, 0, 0, 0, 0});
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, routing));
        sim.runFor(SECOND / 10);
        final List<byte[]> errors = ipv6Seen();
        assertEquals(3, errors.size());
        final byte[][] quoted = {unknown, options, routing};
        final int[] codes = {1, 2, 0};
        final int[] pointers = {6, 42, 42};
        for (int i = 0; i < 3; i++) {
            final byte[] e = errors.get(i);
            assertEquals(4, icmpType(e), "parameter problem");
            assertEquals(codes[i], e[41] & 0xff);
            assertEquals(pointers[i], word(e));
            assertEquals(US, source(e));
            assertEquals(PEER, destination(e));
            assertArrayEquals(quoted[i], Arrays.copyOfRange(e, 48, e.length), "the whole packet quoted");
            assertTrue(Ipv6Frames.checksumHolds(e));
        }
        assertEquals(3, counter("icmp6.tx.errors"));
        // Never an error about an error (RFC 4443 §2.4(e.1)).
        final byte[] errorWithUnknownCode = Ipv6Frames.packet(PEER, US, 253, 64, new byte[8]);
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC, Ipv6Frames.icmpPacket(PEER, US, 64, 1, 0, 0,
            errorWithUnknownCode)));
        sim.runFor(SECOND / 10);
        assertEquals(List.of(), ipv6Seen());
        assertEquals(1, counter("icmp6.rx.errors"));
    }

    @Test
    void aStackWithoutIpv6SendsNoIpv6AndDropsIpv6Frames() {
        try (Simulation plain = new Simulation()) {
            final PeerPort watcher = new PeerPort(plain, "watcher", PEER_MAC);
            final NetStack v4 = plain.addStack("v4", "198.18.0.5/24");
            plain.runFor(3 * SECOND);
            assertEquals(List.of(), watcher.drain(f -> f.etherType() == EtherType.IPV6));
            watcher.send(Ipv6Frames.frame(v4.macAddress(), PEER_MAC,
                Ipv6Frames.icmpPacket(PEER, US, 64, ECHO_REQUEST, 0, 1, new byte[8])));
            plain.runFor(SECOND);
            assertEquals(List.of(), watcher.drain(f -> f.etherType() == EtherType.IPV6));
            assertEquals(1, v4.counters().value("ethernet.drop.unknown_type"));
            assertEquals(null, v4.ipv6());
        }
    }

    /** Any corruption of valid packets is counted and dropped or answered, never a fault (`stack.internal_errors`). */
    @Test
    void corruptedPacketsNeverBreakTheLayer() {
        upAndQuiet();
        introducePeer();
        final byte[][] valid = {
            Ipv6Frames.icmpPacket(PEER, US, 64, ECHO_REQUEST, 0, 1, new byte[40]),
            Ipv6Frames.icmpPacket(PEER, SOLICITED_US, 255, NS, 0, 0, Ipv6Frames.ndBody(US, 1, PEER_MAC)),
            Ipv6Frames.icmpPacket(PEER, US, 255, NA, 0, NA_SOLICITED_OVERRIDE, Ipv6Frames.ndBody(PEER, 2, PEER_MAC)),
            Ipv6Frames.packet(PEER, US, 60, 64, new byte[]{58, 1, 1, 4, 0, 0, 0, 0, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0}),
        };
        final java.util.SplittableRandom random = new java.util.SplittableRandom(6);
        for (int i = 0; i < 20_000; i++) {
            final byte[] packet = valid[random.nextInt(valid.length)].clone();
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                packet[random.nextInt(packet.length)] = (byte) random.nextInt(256);
            }
            final byte[] cut = Arrays.copyOf(packet, 1 + random.nextInt(packet.length));
            peer.send(Ipv6Frames.frame(random.nextBoolean() ? stack.macAddress() : Ipv6Address.multicastMac(1),
                PEER_MAC, random.nextInt(8) == 0 ? cut : packet));
            if (i % 64 == 0) {
                sim.runFor(SECOND / 1000);
                peer.clear();
            }
        }
        sim.runFor(SECOND);
        assertEquals(0, counter("stack.internal_errors"));
        assertTrue(counter("ipv6.rx.packets") >= 20_000 - counter("ethernet.drop.too_short"));
    }

    // ------------------------------------------------------------------------------------------------- MLD

    private static final Ipv6Address ROUTER = Ipv6Address.parse("fe80::1");
    private static final Ipv6Address GROUP_LINK_LOCAL = Ipv6Address.parse("ff02::1:ff00:1");
    private static final Ipv6Address GROUP_US = Ipv6Address.parse("ff02::1:ff00:2");

    /** Checks an MLD packet's framing (RFC 3810 §5) and returns its message (after the hop-by-hop header). */
    private static byte[] mldMessage(byte[] p, Ipv6Address expectedDestination) {
        assertEquals(1, hopLimit(p), "hop limit 1");
        assertEquals(expectedDestination, destination(p));
        // Hop-by-hop: next header 58, length 0, Router Alert (5, 2, value 0 = MLD), PadN.
        assertArrayEquals(new byte[]{58, 0, 5, 2, 0, 0, 1, 0}, Arrays.copyOfRange(p, 40, 48));
        final byte[] message = Arrays.copyOfRange(p, 48, p.length);
        final int stored = ((message[2] & 0xff) << 8) | (message[3] & 0xff);
        final byte[] zeroed = message.clone();
        zeroed[2] = 0;
        zeroed[3] = 0;
        assertEquals(Ipv6Frames.checksum(source(p), destination(p), 58, zeroed), stored, "ICMPv6 checksum");
        return message;
    }

    /** The (record type, group) pairs of an MLDv2 report. */
    private static List<String> records(byte[] report) {
        assertEquals(143, report[0] & 0xff);
        final ByteBuffer b = ByteBuffer.wrap(report);
        final int count = b.getShort(6) & 0xffff;
        final List<String> found = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            final int at = 8 + 20 * i;
            assertEquals(0, b.getShort(at + 2), "no sources");
            found.add((report[at] & 0xff) + " " + new Ipv6Address(b.getLong(at + 4), b.getLong(at + 12)));
        }
        return found;
    }

    @Test
    void reportsItsSolicitedNodeGroupsTwiceOnStart() {
        sim.runFor(3 * SECOND);
        final List<byte[]> reports = mldSeen();
        assertEquals(2, reports.size(), "Robustness Variable reports (RFC 3810 §6.1)");
        for (byte[] p : reports) {
            assertEquals(Ipv6Address.UNSPECIFIED, source(p), "before DAD the link-local address is tentative (§5.2.13)");
            assertEquals(List.of("4 " + GROUP_LINK_LOCAL, "4 " + GROUP_US),
                records(mldMessage(p, Ipv6Address.ALL_MLDV2_ROUTERS)), "CHANGE_TO_EXCLUDE_MODE {}, never ff02::1");
        }
        assertEquals(2, counter("mld.tx.reports"));
    }

    @Test
    void answersAGeneralQueryWithEveryGroupWithinItsResponseDelay() {
        upAndQuiet();
        // MLDv2 general query: max response code 1000 ms, no group, QRV 2, QQIC 125.
        final byte[] query = ByteBuffer.allocate(20).putLong(0).putLong(0).putInt(0x027d_0000).array();
        send(ROUTER, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 1, 130, 0, 1000 << 16, query);
        sim.runFor(SECOND + SECOND / 10);
        final List<byte[]> reports = mldSeen();
        assertEquals(1, reports.size());
        assertEquals(linkLocal, source(reports.get(0)));
        assertEquals(List.of("2 " + GROUP_LINK_LOCAL, "2 " + GROUP_US),
            records(mldMessage(reports.get(0), Ipv6Address.ALL_MLDV2_ROUTERS)), "MODE_IS_EXCLUDE {}");
        // A query from a global address, or forwarded (hop limit above 1), is not an MLD query (§5.1.14).
        send(PEER, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 1, 130, 0, 1000 << 16, query);
        send(ROUTER, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 64, 130, 0, 1000 << 16, query);
        sim.runFor(2 * SECOND);
        assertEquals(List.of(), mldSeen());
        assertEquals(2, counter("mld.drop.invalid_queries"));
    }

    /** A UDP datagram from the peer's port 7000 to ({@code to}, 5000) carrying {@code payload}, its checksum right. */
    private void sendDatagram(Ipv6Address to, byte[] payload) {
        final byte[] udp = ByteBuffer.allocate(8 + payload.length).putShort((short) 7000).putShort((short) 5000)
            .putShort((short) (8 + payload.length)).putShort((short) 0).put(payload).array();
        final int sum = Ipv6Frames.checksum(PEER, to, 17, udp);
        udp[6] = (byte) (sum >>> 8);
        udp[7] = (byte) sum;
        peer.send(Ipv6Frames.frame(Ipv6Address.multicastMac(to.low()), PEER_MAC,
            Ipv6Frames.packet(PEER, to, 17, 64, udp)));
    }

    /**
     * A group an application joins (IPV6_JOIN_GROUP) is reported by MLDv2 as CHANGE_TO_EXCLUDE {} twice (RFC 3810
     * §6.1), its datagrams reach the socket, a general query's answer lists it with the solicited-node groups (§6.2),
     * and on leave it is reported as CHANGE_TO_INCLUDE {} twice and its datagrams are no longer taken.
     */
    @Test
    void anApplicationsGroupIsReportedJoinedAndLeftAndItsDatagramsReachTheSocketMeanwhile() throws Exception {
        upAndQuiet();
        final Ipv6Address group = Ipv6Address.parse("ff0e::1:2");
        final UdpSocket socket = stack.openUdp6();
        socket.bind(Ipv6Address.UNSPECIFIED, 5000);
        socket.join(group);
        sim.runFor(2 * SECOND);
        final List<byte[]> joins = mldSeen();
        assertEquals(2, joins.size(), "Robustness Variable state-change reports");
        for (byte[] p : joins) {
            assertEquals(List.of("4 " + group), records(mldMessage(p, Ipv6Address.ALL_MLDV2_ROUTERS)));
        }
        sendDatagram(group, new byte[] {1, 2, 3});
        sim.runFor(SECOND / 100);
        final java.lang.foreign.MemorySegment received = java.lang.foreign.Arena.ofAuto().allocate(64);
        assertEquals(3, socket.receive(received, 0, 64), "the group's datagram reached the socket");
        assertEquals(1, counter("udp.rx.ipv6_multicast_datagrams"));

        final byte[] query = ByteBuffer.allocate(20).putLong(0).putLong(0).putInt(0x027d_0000).array();
        send(ROUTER, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 1, 130, 0, 1000 << 16, query);
        sim.runFor(SECOND + SECOND / 10);
        final List<byte[]> answers = mldSeen();
        assertEquals(1, answers.size());
        assertEquals(List.of("2 " + GROUP_LINK_LOCAL, "2 " + GROUP_US, "2 " + group),
            records(mldMessage(answers.get(0), Ipv6Address.ALL_MLDV2_ROUTERS)));

        socket.leave(group);
        sim.runFor(2 * SECOND);
        final List<byte[]> leaves = mldSeen();
        assertEquals(2, leaves.size());
        for (byte[] p : leaves) {
            assertEquals(List.of("3 " + group), records(mldMessage(p, Ipv6Address.ALL_MLDV2_ROUTERS)));
        }
        sendDatagram(group, new byte[] {4, 5, 6});
        sim.runFor(SECOND / 100);
        assertEquals(-1, socket.receive(received, 0, 64), "no longer a member");
        assertEquals(1, counter("udp.rx.ipv6_multicast_datagrams"));
        socket.close();
    }

    @Test
    void answersAnMldv1QueryWithV1ReportsToEachGroup() {
        upAndQuiet();
        send(ROUTER, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), 1, 130, 0, 500 << 16, new byte[16]);
        sim.runFor(SECOND);
        final List<byte[]> reports = mldSeen();
        assertEquals(2, reports.size());
        final List<Ipv6Address> groups = new java.util.ArrayList<>();
        for (byte[] p : reports) {
            final byte[] message = mldMessage(p, destination(p));
            assertEquals(131, message[0] & 0xff, "an MLDv1 report (RFC 2710 §3)");
            final Ipv6Address group = new Ipv6Address(ByteBuffer.wrap(message).getLong(8), ByteBuffer.wrap(message).getLong(16));
            assertEquals(group, destination(p), "sent to the group itself");
            groups.add(group);
        }
        assertEquals(java.util.Set.of(GROUP_LINK_LOCAL, GROUP_US), java.util.Set.copyOf(groups));
        assertEquals(1, counter("mld.rx.v1_queries"));
    }

    // ------------------------------------------------------------------------------------------- fragments

    private void sendFragment(int offset, boolean more, int id, byte[] data) {
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC,
            Ipv6Frames.packet(PEER, US, 44, 64, Ipv6Frames.fragment(58, offset, more, id, data))));
    }

    @Test
    void reassemblesAnEchoRequestSentInFragmentsOutOfOrder() {
        upAndQuiet();
        introducePeer();
        final byte[] data = Frames.pattern(1000, 3);
        final byte[] message = Ipv6Frames.icmp(PEER, US, ECHO_REQUEST, 0, 0x0007_0001, data);
        sendFragment(512, false, 0x1234, Arrays.copyOfRange(message, 512, message.length));
        sendFragment(256, true, 0x1234, Arrays.copyOfRange(message, 256, 512));
        sendFragment(0, true, 0x1234, Arrays.copyOfRange(message, 0, 256));
        sim.runFor(SECOND / 10);
        final List<byte[]> sent = ipv6Seen();
        assertEquals(1, sent.size());
        assertEquals(ECHO_REPLY, icmpType(sent.get(0)));
        assertArrayEquals(data, Arrays.copyOfRange(sent.get(0), 48, sent.get(0).length));
        assertTrue(Ipv6Frames.checksumHolds(sent.get(0)));
        assertEquals(3, counter("ipv6.reasm.fragments"));
        assertEquals(1, counter("ipv6.reasm.ok"));
    }

    @Test
    void anOverlappingFragmentDiscardsThePacket() {
        upAndQuiet();
        introducePeer();
        final byte[] message = Ipv6Frames.icmp(PEER, US, ECHO_REQUEST, 0, 1, new byte[600]);
        sendFragment(0, true, 9, Arrays.copyOfRange(message, 0, 304));
        sendFragment(296, false, 9, Arrays.copyOfRange(message, 296, message.length)); // overlaps by 8 bytes
        sim.runFor(SECOND / 10);
        assertEquals(List.of(), ipv6Seen(), "RFC 5722: the whole packet is discarded silently");
        assertEquals(1, counter("ipv6.reasm.overlap_discards"));
        sendFragment(304, false, 9, Arrays.copyOfRange(message, 304, message.length));
        sim.runFor(SECOND / 10);
        assertEquals(List.of(), ipv6Seen(), "nothing of the first fragment was kept");
    }

    @Test
    void fragmentsOfTheWrongLengthOrAnIncompleteChainGetParameterProblems() {
        upAndQuiet();
        introducePeer();
        // More to come and not a multiple of 8 bytes: code 0, pointing at the payload length (RFC 8200 §4.5).
        sendFragment(0, true, 1, new byte[13]);
        // A first fragment whose destination options header runs past it: code 3 (RFC 7112 §5).
        final byte[] options = new byte[16];
        options[0] = 58;
        options[1] = 3; // 32 bytes of header, 16 here
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC,
            Ipv6Frames.packet(PEER, US, 44, 64, Ipv6Frames.fragment(60, 0, true, 2, options))));
        sim.runFor(SECOND / 10);
        final List<byte[]> errors = ipv6Seen();
        assertEquals(2, errors.size());
        assertEquals(4, icmpType(errors.get(0)));
        assertEquals(0, errors.get(0)[41]);
        assertEquals(4, word(errors.get(0)));
        assertEquals(4, icmpType(errors.get(1)));
        assertEquals(3, errors.get(1)[41]);
        assertEquals(1, counter("ipv6.drop.incomplete_header_chain"));
    }

    @Test
    void aPacketThatNeverCompletesIsAnsweredWithTimeExceededAfterSixtySeconds() {
        upAndQuiet();
        introducePeer();
        final byte[] message = Ipv6Frames.icmp(PEER, US, ECHO_REQUEST, 0, 1, new byte[600]);
        sendFragment(0, true, 5, Arrays.copyOfRange(message, 0, 304));
        sim.runFor(59 * SECOND);
        assertEquals(List.of(), ipv6Seen().stream().filter(p -> icmpType(p) != NS).toList(), "only the probes of the peer");
        introducePeer(); // its entry went with the unanswered probes
        sim.runFor(2 * SECOND);
        final List<byte[]> sent = ipv6Seen().stream().filter(p -> icmpType(p) != NS).toList();
        assertEquals(1, sent.size());
        assertEquals(3, icmpType(sent.get(0)), "time exceeded");
        assertEquals(1, sent.get(0)[41], "fragment reassembly time exceeded");
        assertEquals(PEER, destination(sent.get(0)));
        assertEquals(1, counter("ipv6.reasm.timeouts"));
    }

    @Test
    void neighbourDiscoveryInAFragmentIsRefusedAndAnAtomicFragmentIsProcessedAlone() {
        upAndQuiet();
        final byte[] ns = Ipv6Frames.icmp(PEER, SOLICITED_US, NS, 0, 0, Ipv6Frames.ndBody(US, 1, PEER_MAC));
        peer.send(Ipv6Frames.frame(Ipv6Address.multicastMac(SOLICITED_US.low()), PEER_MAC,
            Ipv6Frames.packet(PEER, SOLICITED_US, 44, 255, Ipv6Frames.fragment(58, 0, false, 3, ns))));
        sim.runFor(SECOND / 10);
        assertEquals(List.of(), ipv6Seen(), "RFC 6980: no advertisement");
        assertEquals(1, counter("nd.drop.fragmented"));
        introducePeer();
        final byte[] echo = Ipv6Frames.icmp(PEER, US, ECHO_REQUEST, 0, 0x0003_0003, new byte[32]);
        peer.send(Ipv6Frames.frame(stack.macAddress(), PEER_MAC,
            Ipv6Frames.packet(PEER, US, 44, 64, Ipv6Frames.fragment(58, 0, false, 4, echo))));
        sim.runFor(SECOND / 10);
        final List<byte[]> sent = ipv6Seen();
        assertEquals(1, sent.size());
        assertEquals(ECHO_REPLY, icmpType(sent.get(0)));
        assertEquals(2, counter("ipv6.rx.atomic_fragments"));
        assertEquals(0, counter("ipv6.reasm.fragments"), "never through reassembly (RFC 6946)");
    }

    @Test
    void answersALargeEchoInFragmentsThatReassembleToTheRequestsData() {
        upAndQuiet();
        introducePeer();
        final byte[] data = Frames.pattern(3000, 9);
        final byte[] message = Ipv6Frames.icmp(PEER, US, ECHO_REQUEST, 0, 0x0009_0001, data);
        sendFragment(0, true, 77, Arrays.copyOfRange(message, 0, 1448));
        sendFragment(1448, true, 77, Arrays.copyOfRange(message, 1448, 2896));
        sendFragment(2896, false, 77, Arrays.copyOfRange(message, 2896, message.length));
        sim.runFor(SECOND / 10);
        final List<byte[]> fragments = ipv6Seen();
        assertEquals(3, fragments.size(), "3008 bytes of ICMPv6 at MTU 1500: 1448 + 1448 + 112");
        final java.io.ByteArrayOutputStream whole = new java.io.ByteArrayOutputStream();
        final int id = ByteBuffer.wrap(fragments.get(0)).getInt(44);
        for (int i = 0; i < 3; i++) {
            final byte[] f = fragments.get(i);
            assertEquals(44, f[6], "a fragment header");
            assertTrue(f.length <= 1500);
            final int field = ByteBuffer.wrap(f).getShort(42) & 0xffff;
            assertEquals(whole.size(), field & 0xfff8, "in order, no gap");
            assertEquals(i < 2 ? 1 : 0, field & 1, "M set on all but the last");
            assertEquals(id, ByteBuffer.wrap(f).getInt(44), "one identification");
            assertEquals(58, f[40]);
            whole.write(f, 48, f.length - 48);
        }
        final byte[] reply = whole.toByteArray();
        assertEquals(ECHO_REPLY, reply[0] & 0xff);
        assertArrayEquals(data, Arrays.copyOfRange(reply, 8, reply.length));
        final byte[] zeroed = reply.clone();
        zeroed[2] = 0;
        zeroed[3] = 0;
        assertEquals(Ipv6Frames.checksum(US, PEER, 58, zeroed), ((reply[2] & 0xff) << 8) | (reply[3] & 0xff));
        assertEquals(1, counter("ipv6.tx.fragmented_packets"));
        assertEquals(3, counter("ipv6.tx.fragments"));
    }

    // -------------------------------------------------------------------------------------- router discovery

    private static final long ROUTER_MAC = MacAddress.parse("0a:00:00:00:00:fe");

    /** A router advertisement: lifetime, then options (RFC 4861 §4.2). */
    private void advertise(Ipv6Address from, int hopLimit, int lifetimeSeconds, byte[] options) {
        final byte[] body = ByteBuffer.allocate(8 + options.length).putInt(0).putInt(0).put(options).array();
        send(from, Ipv6Address.ALL_NODES, Ipv6Address.multicastMac(1), hopLimit, ROUTER_ADVERTISEMENT, 0,
            (64 << 24) | lifetimeSeconds, body);
    }

    private static byte[] prefixOption(Ipv6Address prefix, int length) {
        return ByteBuffer.allocate(32).put((byte) 3).put((byte) 4).put((byte) length).put((byte) 0xC0)
            .putInt(86400).putInt(14400).putInt(0).putLong(prefix.high()).putLong(prefix.low()).array();
    }

    private static byte[] mtuOption(int mtu) {
        return ByteBuffer.allocate(8).put((byte) 5).put((byte) 1).putShort((short) 0).putInt(mtu).array();
    }

    private static byte[] linkLayerOption(long mac) {
        return ByteBuffer.allocate(8).put((byte) 1).put((byte) 1).putShort((short) (mac >>> 32)).putInt((int) mac).array();
    }

    @Test
    void solicitsRoutersThreeTimesFourSecondsApartUntilOneAdvertises() {
        sim.runFor(15 * SECOND);
        final List<PeerPort.Received> solicitations = peer.drain(f -> f.etherType() == EtherType.IPV6
            && (f.bytes()[14 + 40] & 0xff) == ROUTER_SOLICITATION);
        assertEquals(3, solicitations.size(), "MAX_RTR_SOLICITATIONS (RFC 4861 §10)");
        assertEquals(4 * SECOND, solicitations.get(2).atNs() - solicitations.get(1).atNs());
        assertTrue(solicitations.get(0).atNs() < SECOND, "after a random delay below a second");
        final byte[] last = Arrays.copyOfRange(solicitations.get(2).bytes(), 14, solicitations.get(2).bytes().length);
        assertEquals(Ipv6Address.ALL_ROUTERS, destination(last));
        assertEquals(linkLocal, source(last));
        assertEquals(255, hopLimit(last));
        assertEquals(40 + 16, last.length, "with our MAC as a source link-layer option");
        assertTrue(Ipv6Frames.checksumHolds(last));
        assertEquals(3, counter("nd.tx.router_solicitations"));
    }

    @Test
    void anOffLinkPeerIsReachedThroughTheAdvertisedRouterAndItsMtu() {
        final Ipv6Address router = Ipv6Address.parse("fe80::1");
        final Ipv6Address far = Ipv6Address.parse("2001:db8:99::5");
        final PeerPort routerPort = new PeerPort(sim, "router", ROUTER_MAC);
        upAndQuiet();
        routerPort.clear();
        // Without a router an off-link address cannot be answered.
        routerPort.send(Ipv6Frames.frame(stack.macAddress(), ROUTER_MAC,
            Ipv6Frames.icmpPacket(far, US, 63, ECHO_REQUEST, 0, 0x0005_0001, new byte[8])));
        sim.runFor(SECOND / 10);
        assertEquals(1, counter("ipv6.tx.no_route"));
        // A router advertises itself (lifetime 1800 s), its MAC, an on-link prefix and an MTU of 1400.
        final byte[] options = Frames.concat(linkLayerOption(ROUTER_MAC), mtuOption(1400),
            prefixOption(Ipv6Address.parse("2001:db8:1::"), 64));
        peer.send(Ipv6Frames.frame(Ipv6Address.multicastMac(1), ROUTER_MAC, Ipv6Frames.icmpPacket(router,
            Ipv6Address.ALL_NODES, 255, ROUTER_ADVERTISEMENT, 0, (64 << 24) | 1800,
            Frames.concat(new byte[8], options))));
        sim.runFor(SECOND / 10);
        assertEquals(1, counter("nd.rx.router_advertisements"));
        routerPort.clear();
        peer.clear();
        final byte[] data = Frames.pattern(1380, 4); // 1428 bytes with its headers: over the advertised MTU
        routerPort.send(Ipv6Frames.frame(stack.macAddress(), ROUTER_MAC,
            Ipv6Frames.icmpPacket(far, US, 63, ECHO_REQUEST, 0, 0x0005_0002, data)));
        sim.runFor(SECOND / 10);
        final List<PeerPort.Received> toRouter = routerPort.drain(f -> f.etherType() == EtherType.IPV6
            && ByteBuffer.wrap(f.bytes()).getLong(0) >>> 16 == ROUTER_MAC);
        assertEquals(2, toRouter.size(), "the reply, in two fragments, to the router's MAC");
        for (PeerPort.Received f : toRouter) {
            final byte[] p = Arrays.copyOfRange(f.bytes(), 14, f.bytes().length);
            assertEquals(far, destination(p));
            assertTrue(p.length <= 1400, "within the advertised MTU: " + p.length);
        }
        // An address on the advertised prefix is on link: resolved directly, not through the router.
        routerPort.clear();
        routerPort.send(Ipv6Frames.frame(stack.macAddress(), ROUTER_MAC,
            Ipv6Frames.icmpPacket(Ipv6Address.parse("2001:db8:1::7"), US, 64, ECHO_REQUEST, 0, 1, new byte[8])));
        sim.runFor(SECOND / 10);
        final List<byte[]> solicited = ipv6Seen().stream().filter(p -> icmpType(p) == NS).toList();
        assertEquals(Ipv6Address.parse("2001:db8:1::7"), target(solicited.get(0)));
    }

    @Test
    void anAdvertisementFromOffTheLinkOrAGlobalAddressIsIgnored() {
        upAndQuiet();
        advertise(PEER, 255, 1800, new byte[0]);
        advertise(Ipv6Address.parse("fe80::1"), 64, 1800, new byte[0]);
        sim.runFor(SECOND / 10);
        assertEquals(1, counter("nd.drop.invalid"));
        assertEquals(1, counter("nd.drop.hop_limit"));
        send(Ipv6Address.parse("2001:db8:99::5"), US, stack.macAddress(), 63, ECHO_REQUEST, 0, 1, new byte[8]);
        sim.runFor(SECOND / 10);
        assertEquals(1, counter("ipv6.tx.no_route"), "no default router was learnt");
    }

    // ------------------------------------------------------------------------------------------------ SLAAC

    private static byte[] prefixOption(Ipv6Address prefix, int flags, long valid, long preferred) {
        return ByteBuffer.allocate(32).put((byte) 3).put((byte) 4).put((byte) 64).put((byte) flags)
            .putInt((int) valid).putInt((int) preferred).putInt(0).putLong(prefix.high()).putLong(prefix.low()).array();
    }

    private void advertisePrefix(PeerPort router, long valid) {
        router.send(Ipv6Frames.frame(Ipv6Address.multicastMac(1), ROUTER_MAC, Ipv6Frames.icmpPacket(
            Ipv6Address.parse("fe80::1"), Ipv6Address.ALL_NODES, 255, ROUTER_ADVERTISEMENT, 0, (64 << 24) | 1800,
            Frames.concat(new byte[8], linkLayerOption(ROUTER_MAC),
                prefixOption(Ipv6Address.parse("2001:db8:5::"), 0xC0, valid, Math.min(valid, 3600))))));
    }

    /** A link that shares its interface with the kernel (as AF_XDP's does), recording the addresses it is given. */
    static final class SharedInterfaceLink extends dev.tern.ethernet.link.ForwardingLink {
        final List<Ipv6Address> taken = new java.util.ArrayList<>();

        SharedInterfaceLink(dev.tern.ethernet.link.Link link) {
            super(link);
        }

        @Override
        public void addIpv6Address(long high, long low) {
            taken.add(new Ipv6Address(high, low));
        }

        @Override
        public void removeIpv6Address(long high, long low) {
            taken.remove(new Ipv6Address(high, low));
        }

        @Override
        public boolean sharesInterfaceWithKernel() {
            return true;
        }
    }

    /**
     * On an interface the kernel shares (AF_XDP), the kernel forms the EUI-64 link-local address from the MAC for
     * itself, so Tern's is opaque (RFC 7217) instead; the link is given each address to steer, from before DAD
     * (tentative addresses need their ND), and loses one that turns out duplicate. SLAAC is refused there, with the
     * reason: router advertisements go to all nodes, which stay the kernel's.
     */
    @Test
    void onAnInterfaceSharedWithTheKernelTheLinkLocalAddressIsOpaqueAndTheLinkSteersEachAddress() {
        try (Simulation own = new Simulation()) {
            final SharedInterfaceLink[] link = new SharedInterfaceLink[1];
            final PeerPort defender = new PeerPort(own, "defender", PEER_MAC);
            final Ipv6Address taken = Ipv6Address.parse("2001:db8::7");
            final NetStack shared = own.addStack("shared", "198.18.0.6/24", wire -> link[0] = new SharedInterfaceLink(wire),
                b -> b.ipv6(Ipv6Config.withAddresses(List.of(Ipv6InterfaceAddress.parse("2001:db8::6/64"),
                    Ipv6InterfaceAddress.parse(taken + "/64")))));
            final Ipv6Address own6 = shared.ipv6().addresses().address(0).address();
            assertTrue(Ipv6Address.isLinkLocal(own6.high()), own6.toString());
            assertTrue(!own6.equals(Ipv6Address.linkLocal(shared.macAddress())), "not the kernel's EUI-64 one");
            own.runFor(SECOND / 100);
            assertEquals(List.of(own6, Ipv6Address.parse("2001:db8::6"), taken), link[0].taken,
                "every address steered, tentative ones too");
            // Another node defends 2001:db8::7 (RFC 4862 §5.4.5): the link no longer steers it.
            defender.send(Ipv6Frames.frame(Ipv6Address.multicastMac(Ipv6Address.ALL_NODES.low()), PEER_MAC,
                Ipv6Frames.icmpPacket(PEER, Ipv6Address.ALL_NODES, 255, NA, 0, 0x2000_0000,
                    Ipv6Frames.ndBody(taken, 2, PEER_MAC))));
            own.runFor(2 * SECOND);
            assertEquals(1, shared.counters().value("nd.dad.duplicates"));
            assertEquals(List.of(own6, Ipv6Address.parse("2001:db8::6")), link[0].taken);
        }
        try (Simulation own = new Simulation()) {
            final IllegalArgumentException refused = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> own.addStack("auto", "198.18.0.5/24", SharedInterfaceLink::new,
                    b -> b.ipv6(Ipv6Config.withAddresses(List.of()).withSlaac(true))));
            assertTrue(refused.getMessage().contains("--ip6 auto") && refused.getMessage().contains("shares its interface"),
                refused.getMessage());
        }
    }

    @Test
    void slaacFormsAnAddressFromAnAdvertisedPrefixChecksItAndUsesIt() {
        try (Simulation own = new Simulation()) {
            final PeerPort watcher = new PeerPort(own, "watcher", PEER_MAC);
            final PeerPort router = new PeerPort(own, "router", ROUTER_MAC);
            final NetStack auto = own.addStack("auto", "198.18.0.5/24",
                b -> b.ipv6(Ipv6Config.withAddresses(List.of()).withSlaac(true)));
            own.runFor(2 * SECOND);
            watcher.clear();
            advertisePrefix(router, 86400);
            own.runFor(SECOND / 10);
            // RFC 4862 §5.5.3 d): the prefix and the modified EUI-64 identifier, then DAD (§5.4) before use.
            final Ipv6Address formed = new Ipv6Address(Ipv6Address.parse("2001:db8:5::").high(),
                Ipv6Address.interfaceIdentifier(auto.macAddress()));
            final List<byte[]> dad = watcher.drain(f -> f.etherType() == EtherType.IPV6).stream()
                .map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length)).filter(p -> icmpType(p) == NS).toList();
            assertEquals(1, dad.size());
            assertEquals(formed, target(dad.get(0)));
            assertEquals(Ipv6Address.UNSPECIFIED, source(dad.get(0)));
            assertEquals(1, auto.counters().value("nd.slaac.addresses"));
            assertEquals(formed + "/64 tentative autoconfigured", auto.ipv6().addresses().describe().get(1));
            own.runFor(SECOND + SECOND / 10);
            assertEquals(formed + "/64 preferred autoconfigured", auto.ipv6().addresses().describe().get(1));
            watcher.clear();
            // The peer is on the advertised (on-link) prefix: it pings the new address and is answered.
            final Ipv6Address peer6 = Ipv6Address.parse("2001:db8:5::1");
            watcher.send(Ipv6Frames.frame(Ipv6Address.multicastMac(formed.solicitedNode().low()), PEER_MAC,
                Ipv6Frames.icmpPacket(peer6, formed.solicitedNode(), 255, NS, 0, 0, Ipv6Frames.ndBody(formed, 1, PEER_MAC))));
            watcher.send(Ipv6Frames.frame(auto.macAddress(), PEER_MAC,
                Ipv6Frames.icmpPacket(peer6, formed, 64, ECHO_REQUEST, 0, 0x0001_0001, new byte[16])));
            own.runFor(SECOND / 10);
            final List<byte[]> answers = watcher.drain(f -> f.etherType() == EtherType.IPV6).stream()
                .map(f -> Arrays.copyOfRange(f.bytes(), 14, f.bytes().length)).toList();
            assertTrue(answers.stream().anyMatch(p -> icmpType(p) == NA && target(p).equals(formed)), "answers ND for it");
            assertTrue(answers.stream().anyMatch(p -> icmpType(p) == ECHO_REPLY && source(p).equals(formed)), "and ping");
        }
    }

    @Test
    void anAutoconfiguredAddressExpiresWithItsValidLifetimeAndTheTwoHourRuleHolds() {
        try (Simulation own = new Simulation()) {
            final PeerPort router = new PeerPort(own, "router", ROUTER_MAC);
            final NetStack auto = own.addStack("auto", "198.18.0.5/24",
                b -> b.ipv6(Ipv6Config.withAddresses(List.of()).withSlaac(true)));
            own.runFor(2 * SECOND);
            advertisePrefix(router, 30);
            own.runFor(2 * SECOND);
            assertTrue(auto.ipv6().addresses().describe().get(1).endsWith("preferred autoconfigured"));
            own.runFor(29 * SECOND);
            assertTrue(auto.ipv6().addresses().describe().get(1).endsWith("expired autoconfigured"),
                auto.ipv6().addresses().describe().toString());
            // A long lifetime, then a short one: RFC 4862 §5.5.3 e) keeps two hours, not 60 s.
            advertisePrefix(router, 86400);
            own.runFor(2 * SECOND);
            advertisePrefix(router, 60);
            own.runFor(120 * SECOND);
            assertTrue(auto.ipv6().addresses().describe().get(1).endsWith("preferred autoconfigured"),
                auto.ipv6().addresses().describe().toString());
            assertEquals(1, auto.ipv6().addresses().describe().stream().filter(l -> l.contains("2001:db8:5")).count(),
                "the expired row was reused");
        }
    }

    @Test
    void withoutSlaacNoAddressIsFormed() {
        final PeerPort router = new PeerPort(sim, "router", ROUTER_MAC);
        upAndQuiet();
        advertisePrefix(router, 86400);
        sim.runFor(2 * SECOND);
        assertEquals(0, counter("nd.slaac.addresses"));
        assertEquals(2, stack.ipv6().addresses().describe().size());
    }

    // --------------------------------------------------------------------------------------------- path MTU

    /** A packet too big from a router on the path, quoting a packet of ours (RFC 4443 §3.2). */
    private void packetTooBig(Ipv6Address quotedSource, int mtu) {
        final byte[] quoted = Ipv6Frames.packet(quotedSource, PEER, 58, 64, new byte[64]);
        send(Ipv6Address.parse("2001:db8::fe"), US, stack.macAddress(), 64, 2, 0, mtu, quoted);
    }

    private List<Integer> echoReplySizes(int dataLength, int sequence) {
        send(PEER, US, stack.macAddress(), 64, ECHO_REQUEST, 0, 0x0001_0000 | sequence, new byte[dataLength]);
        sim.runFor(SECOND / 10);
        return ipv6Seen().stream().filter(p -> icmpType(p) == ECHO_REPLY || p[6] == 44).map(p -> p.length).toList();
    }

    @Test
    void aPacketTooBigLowersThePathMtuNeverBelow1280() {
        upAndQuiet();
        introducePeer();
        assertEquals(List.of(1448), echoReplySizes(1400, 1), "one packet at the link's 1500");
        packetTooBig(US, 1300);
        sim.runFor(SECOND / 10);
        assertEquals(1, counter("icmp6.rx.path_mtu_updates"));
        assertEquals(1300, stack.ipv6().pathMtu(PEER.high(), PEER.low(), sim.nowNs()));
        final List<Integer> fragments = echoReplySizes(1400, 2);
        assertEquals(2, fragments.size(), "now in fragments");
        assertTrue(fragments.stream().allMatch(n -> n <= 1300), fragments.toString());
        // Below the IPv6 minimum: 1280 (RFC 8201 §4); quoting a packet not ours: ignored.
        packetTooBig(US, 600);
        packetTooBig(Ipv6Address.parse("2001:db8::77"), 1280);
        sim.runFor(SECOND / 10);
        assertEquals(1280, stack.ipv6().pathMtu(PEER.high(), PEER.low(), sim.nowNs()));
        assertEquals(1, counter("icmp6.drop.error_not_ours"));
        // A larger MTU is not believed.
        packetTooBig(US, 1400);
        sim.runFor(SECOND / 10);
        assertEquals(1280, stack.ipv6().pathMtu(PEER.high(), PEER.low(), sim.nowNs()));
        // After ten minutes the link's MTU is tried again.
        sim.runFor(601 * SECOND);
        assertEquals(1500, stack.ipv6().pathMtu(PEER.high(), PEER.low(), sim.nowNs()));
    }
}
