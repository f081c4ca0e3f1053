package dev.tern.stack;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.stack.sim.Simulation;
import dev.tern.tcp.TcpOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.function.IntSupplier;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stack that falls behind its link (a SYN flood must not starve established connections): under receive pressure, SYNs to a listener are dropped and
 * segments for no connection go unanswered, while an established connection goes on; the link is asked to shed
 * SYNs itself, and to stop after a hold that doubles while the flood keeps coming back. The link's pressure is
 * injected by a wrapper on the memory wire, so each case is exact on virtual time.
 */
class ReceiveSheddingTest {
    private static final long MS = 1_000_000L;
    private static final int US = Ipv4Address.parse("198.18.0.2");

    /** A link whose receive pressure the test sets, recording what the stack asks of it. */
    static final class PressureLink extends ForwardingLink {
        boolean pressure;
        boolean canShed = true;
        final List<Boolean> shedRequests = new ArrayList<>();
        final List<Long> shedRequestTimes = new ArrayList<>();
        final List<int[]> sourceRequests = new ArrayList<>();
        private final Simulation sim;

        PressureLink(Link link, Simulation sim) {
            super(link);
            this.sim = sim;
        }

        @Override
        public boolean receivePressure() {
            return pressure;
        }

        @Override
        public boolean shedUnsolicitedSyns(boolean shed) {
            if (!canShed) {
                return false;
            }
            shedRequests.add(shed);
            shedRequestTimes.add(sim.nowNs());
            return true;
        }

        @Override
        public boolean shedSynsFrom(int[] sources, int count) {
            if (!canShed) {
                return false;
            }
            sourceRequests.add(Arrays.copyOf(sources, count));
            return true;
        }
    }

    private Simulation sim;
    private PressureLink link;
    private NetStack us;
    private NetStack peer;
    private final Arena arena = Arena.ofConfined();

    @BeforeEach
    void setUp() {
        sim = new Simulation();
        us = sim.addStack("us", "198.18.0.2/24", wire -> link = new PressureLink(wire, sim), builder -> { });
        peer = sim.addStack("peer", "198.18.0.1/24");
    }

    @AfterEach
    void tearDown() {
        assertEquals(0, us.counters().value("stack.internal_errors"));
        sim.close();
        arena.close();
    }

    private long counter(NetStack stack, String label) {
        return stack.counters().value(label);
    }

    /**
     * Pressure alone is no SYN flood: a client's SYN under it is answered at once. Before, TCP dropped every SYN to a
     * listener under pressure, so a flood's first SYNs (or a flood of other frames) cost other clients their 1 s retry.
     */
    @Test
    void underPressureWithoutASynFloodAClientsSynIsAnswered() throws Exception {
        final TcpListener listener = us.listen(80, 8);
        sim.runFor(10 * MS);
        link.pressure = true;
        final TcpConnection client = peer.connect(US, 80);
        assertTrue(sim.runUntil(client::isConnected, 100 * MS), "connected without a retry");
        assertTrue(listener.accept() != null);
        assertEquals(0, counter(us, "tcp.drop.syn_pressure"));
        assertEquals(List.of(), link.shedRequests);
    }

    @Test
    void underPressureASegmentForNoConnectionGetsNoReset() throws Exception {
        link.pressure = true;
        final TcpConnection client = peer.connect(US, 81); // nothing listens on 81
        sim.runFor(500 * MS);
        assertEquals(1, counter(us, "tcp.rx.unanswered_pressure"));
        assertEquals(1, counter(us, "tcp.drop.no_socket"));
        assertEquals(0, counter(us, "tcp.tx.segments"), "no reset");
        assertFalse(client.isEnded());

        link.pressure = false;
        sim.runUntil(client::isEnded, 3_000 * MS); // the retry is refused with a reset, as ever
        assertTrue(client.isEnded());
        assertEquals(1, counter(peer, "tcp.conn.refused"));
    }

    @Test
    void anEstablishedConnectionKeepsExchangingDataUnderPressure() throws Exception {
        final TcpListener listener = us.listen(80, 8);
        final TcpConnection client = peer.connect(US, 80, 0, TcpOptions.DEFAULT);
        sim.runUntil(client::isConnected, 1_000 * MS);
        final TcpConnection server = listener.accept();
        link.pressure = true;
        final MemorySegment sent = arena.allocate(100_000);
        for (int i = 0; i < sent.byteSize(); i++) {
            sent.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        final MemorySegment received = arena.allocate(sent.byteSize());
        long written = 0;
        long read = 0;
        final long deadline = sim.nowNs() + 10_000 * MS;
        while (read < sent.byteSize() && sim.nowNs() < deadline) {
            if (written < sent.byteSize()) {
                written += client.write(sent, written, (int) (sent.byteSize() - written));
            }
            final int n = server.read(received, read, (int) (received.byteSize() - read));
            read += Math.max(0, n);
            sim.step();
        }
        assertEquals(sent.byteSize(), read);
        assertArrayEquals(sent.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
            received.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        assertEquals(0, counter(us, "tcp.drop.syn_pressure"));
        assertTrue(counter(us, "stack.shed.pressure_polls") > 0);
    }

    @Test
    void theLinkShedsWhilePressureLastsAndAHoldAfterThatDoublesWhileTheFloodReturns() {
        final PeerPort port = new PeerPort(sim, "flood", MacAddress.parse("0a:00:00:00:00:66"));
        final java.util.Random random = new java.util.Random(11);
        final IntSupplier spread = () -> Ipv4Address.parse("198.19.0.0") | random.nextInt(1 << 16);
        sim.runFor(10 * MS);
        link.pressure = true;
        final long pressureBegan = sim.nowNs();
        flood(port, TCP, spread, 8, 50 * MS);
        assertEquals(List.of(true), link.shedRequests, "on once the pressure lasted, once");
        assertEquals(1, counter(us, "stack.shed.episodes"));
        assertEquals(1, counter(us, "stack.shed.active"));
        final long firstOn = link.shedRequestTimes.get(0);
        assertTrue(firstOn - pressureBegan >= ReceiveShedding.SUSTAIN_NS && firstOn - pressureBegan < ReceiveShedding.SUSTAIN_NS + 2 * MS,
            "on 1 ms after the pressure began, was " + (firstOn - pressureBegan) / 1_000 + " us");

        link.pressure = false;
        final long calm = sim.nowNs();
        sim.runFor(300 * MS);
        assertEquals(List.of(true, false), link.shedRequests);
        final long firstHold = link.shedRequestTimes.get(1) - calm;
        // The last poll under pressure was the flood's last step, up to 100 us before calm.
        assertTrue(firstHold >= ReceiveShedding.HOLD_MIN_NS - MS && firstHold < ReceiveShedding.HOLD_MIN_NS + 20 * MS,
            "off 200 ms after the last poll under pressure, was " + firstHold / MS + " ms");
        assertEquals(0, counter(us, "stack.shed.active"));

        // The flood is back within two holds: on again, and this time held twice as long.
        link.pressure = true;
        flood(port, TCP, spread, 8, 20 * MS);
        link.pressure = false;
        final long calmAgain = sim.nowNs();
        sim.runFor(1_000 * MS);
        assertEquals(List.of(true, false, true, false), link.shedRequests);
        final long secondHold = link.shedRequestTimes.get(3) - calmAgain;
        assertTrue(secondHold >= 2 * ReceiveShedding.HOLD_MIN_NS - MS && secondHold < 2 * ReceiveShedding.HOLD_MIN_NS + 20 * MS,
            "the second hold doubles, was " + secondHold / MS + " ms");
        assertEquals(2, counter(us, "stack.shed.episodes"));

        // After a calm spell longer than two holds, the hold starts from the bottom again.
        sim.runFor(2_000 * MS);
        link.pressure = true;
        flood(port, TCP, spread, 8, 20 * MS);
        link.pressure = false;
        final long calmLater = sim.nowNs();
        sim.runFor(1_000 * MS);
        final long thirdHold = link.shedRequestTimes.get(5) - calmLater;
        assertTrue(thirdHold < ReceiveShedding.HOLD_MIN_NS + 20 * MS, "reset after a calm spell, was " + thirdHold / MS + " ms");
        assertTrue(firstOn > 0);
    }

    /**
     * Pressure that one poll meets and the next does not (a thread that lost its processor for a moment and drained
     * its ring at once), twenty times over, does not turn the link's filter on. It did at the first such poll before
     * the pressure had to last {@link ReceiveShedding#SUSTAIN_NS}.
     */
    @Test
    void pressureThatDoesNotLastLeavesTheLinksFilterOff() {
        sim.runFor(10 * MS);
        for (int spell = 0; spell < 20; spell++) {
            link.pressure = true;
            final long polls = counter(us, "stack.shed.pressure_polls");
            while (counter(us, "stack.shed.pressure_polls") == polls) {
                sim.step(); // until one poll has met the pressure
            }
            link.pressure = false;
            sim.runFor(20 * MS);
        }
        assertTrue(counter(us, "stack.shed.pressure_polls") >= 20);
        assertEquals(List.of(), link.shedRequests, "never asked to filter");
        assertEquals(0, counter(us, "stack.shed.episodes"));
    }

    @Test
    void aLinkThatCannotShedLeavesTheStackToDropOnItsOwn() throws Exception {
        link.canShed = false;
        final PeerPort port = listenUnderPressure();
        final java.util.Random random = new java.util.Random(5);
        flood(port, TCP, () -> Ipv4Address.parse("198.19.0.0") | random.nextInt(1 << 16), 8, 20 * MS);
        assertTrue(counter(us, "tcp.drop.syn_pressure") > 100, "TCP drops a spread flood's SYNs");
        assertEquals(0, counter(us, "stack.shed.episodes"));

        // A single source's flood the stack drops by source itself, and another client gets in (once the table's
        // window has forgotten the spread flood).
        link.pressure = false;
        sim.runFor(1_000 * MS);
        link.pressure = true;
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 20 * MS);
        final long tcpDrops = counter(us, "tcp.drop.syn_pressure");
        final TcpConnection client = peer.connect(US, 80);
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 10 * MS);
        assertTrue(client.isConnected(), "connected under the flood, without a retry");
        assertTrue(counter(us, "stack.shed.syn_source_drops") > 0);
        assertEquals(tcpDrops, counter(us, "tcp.drop.syn_pressure"));
        assertEquals(0, counter(us, "stack.shed.episodes"));
    }

    private static final int FLOOD_SOURCE = Ipv4Address.parse("198.18.0.66");
    private static final int UDP = 17;
    private static final int TCP = 6;

    private TcpListener floodListener;

    /** A listener on port 80, the flood's port on the wire, and the link under pressure from now on. */
    private PeerPort listenUnderPressure() throws Exception {
        final PeerPort port = new PeerPort(sim, "flood", MacAddress.parse("0a:00:00:00:00:66"));
        floodListener = us.listen(80, 64);
        sim.runFor(10 * MS);
        link.pressure = true;
        return port;
    }

    /** A TCP segment with only SYN set (a connection opening), its checksum right. */
    private static byte[] syn(int source, int sourcePort, int destination, int destinationPort) {
        return segment(source, sourcePort, destination, destinationPort, 0x02);
    }

    /** A TCP segment with {@code flags}, its checksum right. */
    private static byte[] segment(int source, int sourcePort, int destination, int destinationPort, int flags) {
        final byte[] tcp = new byte[20];
        final MemorySegment s = MemorySegment.ofArray(tcp);
        dev.tern.core.memory.BigEndian.u16(s, 0, sourcePort);
        dev.tern.core.memory.BigEndian.u16(s, 2, destinationPort);
        dev.tern.core.memory.BigEndian.i32(s, 4, sourcePort * 7919);
        tcp[12] = 0x50;
        tcp[13] = (byte) flags;
        dev.tern.core.memory.BigEndian.u16(s, 14, 65535);
        final int checksum = InternetChecksum.finish(InternetChecksum.add(
            InternetChecksum.pseudoHeader(source, destination, TCP, tcp.length), s, 0, tcp.length));
        dev.tern.core.memory.BigEndian.u16(s, 16, checksum);
        return tcp;
    }

    /**
     * {@code perStep} frames from {@code port} every 100 us for {@code durationNs}, each an IPv4 datagram to us of
     * {@code protocol} (a SYN to port 80, or a UDP datagram to port 9) from the address {@code source} gives.
     */
    private void flood(PeerPort port, int protocol, IntSupplier source, int perStep, long durationNs) {
        final long end = sim.nowNs() + durationNs;
        int n = 0;
        while (sim.nowNs() < end) {
            for (int i = 0; i < perStep; i++, n++) {
                final int from = source.getAsInt();
                final byte[] payload = protocol == TCP ? syn(from, 1024 + (n & 0x7fff), US, 80)
                    : new byte[] {0, 9, 0, 9, 0, 12, 0, 0, 1, 2, 3, 4};
                port.send(Frames.ethernet(link.macAddress(), port.mac(), EtherType.IPV4,
                    Frames.ipv4(from, US, protocol, n, 0, 64, payload)));
            }
            sim.step(sim.nowNs() + 100_000);
        }
    }

    /**
     * Pressure from a flood of frames that are not SYNs (UDP here; ARP or ACKs alike): filtering SYNs would not
     * drain the ring, so the link is never asked to, and the run is counted as pressure without a SYN flood.
     */
    @Test
    void aFloodOfOtherFramesDoesNotTurnSynSheddingOn() throws Exception {
        final PeerPort port = listenUnderPressure();
        flood(port, UDP, () -> FLOOD_SOURCE, 8, 40 * MS);
        final TcpConnection client = peer.connect(US, 80);
        flood(port, UDP, () -> FLOOD_SOURCE, 8, 10 * MS);
        assertTrue(client.isConnected(), "a client connected under the flood, without a retry");
        assertEquals(0, counter(us, "tcp.drop.syn_pressure"), "TCP dropped no SYN");
        assertTrue(counter(us, "udp.drop.no_socket") > 3_000, "the flood arrived");
        assertEquals(List.of(), link.shedRequests, "no random SYN filter");
        assertEquals(List.of(), link.sourceRequests, "no filter by source");
        assertEquals(0, counter(us, "stack.shed.episodes"));
        assertEquals(1, counter(us, "stack.shed.pressure_without_syn_flood"), "one run, counted once");

        // A SYN flood under the same pressure turns it on.
        link.pressure = false;
        sim.runFor(10 * MS);
        link.pressure = true;
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 20 * MS);
        assertEquals(1, counter(us, "stack.shed.episodes"));
        assertEquals(1, counter(us, "stack.shed.pressure_without_syn_flood"));
    }

    /**
     * A flood the stack answers brings a reset back for each SYN-ACK (hping3's kernel has no such connection), and a
     * few other frames come with it: SYNs are then just under half of what arrives, yet it is a SYN flood, and
     * filtering its SYNs ends its resets too. Before, such a run was taken for pressure without a SYN flood and
     * nothing was filtered.
     */
    @Test
    void theResetsThatAnswerAFloodsSynAcksCountWithTheFlood() throws Exception {
        final PeerPort port = listenUnderPressure();
        final long end = sim.nowNs() + 20 * MS;
        for (int n = 0; sim.nowNs() < end; n++) {
            for (int i = 0; i < 4; i++) {
                final int sourcePort = 1024 + ((4 * n + i) & 0x7fff);
                port.send(Frames.ethernet(link.macAddress(), port.mac(), EtherType.IPV4,
                    Frames.ipv4(FLOOD_SOURCE, US, TCP, n, 0, 64, syn(FLOOD_SOURCE, sourcePort, US, 80))));
                port.send(Frames.ethernet(link.macAddress(), port.mac(), EtherType.IPV4,
                    Frames.ipv4(FLOOD_SOURCE, US, TCP, n, 0, 64, segment(FLOOD_SOURCE, sourcePort, US, 80, 0x04))));
            }
            port.send(Frames.ethernet(link.macAddress(), port.mac(), EtherType.IPV4,
                Frames.ipv4(FLOOD_SOURCE, US, UDP, n, 0, 64, new byte[] {0, 9, 0, 9, 0, 12, 0, 0, 1, 2, 3, 4})));
            sim.step(sim.nowNs() + 100_000);
        }
        assertEquals(1, link.sourceRequests.size(), "the source was listed");
        assertArrayEquals(new int[] {FLOOD_SOURCE}, link.sourceRequests.get(0));
        assertEquals(0, counter(us, "stack.shed.pressure_without_syn_flood"));
    }

    /**
     * A SYN flood from one address: the link is asked to drop that address's SYNs only (no random filter), the
     * stack drops them itself under pressure, and another client, whose SYNs TCP no longer drops, connects at once
     * while the pressure lasts; before, its SYN was dropped and it got in after its 1 s retry at best.
     */
    @Test
    void aSingleSourceFloodIsShedBySourceAndAnotherClientConnectsAtOnce() throws Exception {
        final PeerPort port = listenUnderPressure();
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 20 * MS);
        assertEquals(1, link.sourceRequests.size(), "one list");
        assertArrayEquals(new int[] {FLOOD_SOURCE}, link.sourceRequests.get(0));
        assertEquals(List.of(), link.shedRequests, "no random filter");
        assertEquals(1, counter(us, "stack.shed.episodes"));
        assertEquals(1, counter(us, "stack.shed.source_filters"));
        assertEquals(0, counter(us, "stack.shed.random_filters"));
        assertEquals(1, counter(us, "stack.shed.sources"));
        final long dropsBefore = counter(us, "stack.shed.syn_source_drops");
        assertTrue(dropsBefore > 0);

        final long began = sim.nowNs();
        final TcpConnection client = peer.connect(US, 80);
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 10 * MS); // the flood goes on, and the pressure with it
        assertTrue(client.isConnected(), "connected under the flood, without a retry");
        assertTrue(sim.nowNs() - began < 100 * MS);
        assertTrue(floodListener.accept() != null);
        assertTrue(counter(us, "stack.shed.syn_source_drops") > dropsBefore, "the flood's SYNs still dropped");

        link.pressure = false;
        sim.runFor(300 * MS);
        assertEquals(2, link.sourceRequests.size());
        assertEquals(0, link.sourceRequests.get(1).length, "the list is emptied after the hold");
        assertEquals(0, counter(us, "stack.shed.active"));
        assertEquals(0, counter(us, "stack.shed.sources"));
    }

    /**
     * The flood outlives the hold: the link's list is emptied, and the flood's SYNs fill the ring again. The source
     * just released is blamed again at once, so TCP does not drop every SYN to the listener while the table relearns
     * it, and another client connecting as the flood returns gets in without a retry (a veth run over AF_XDP once
     * saw such a client wait 1 s).
     */
    @Test
    void aSourceReleasedAfterTheHoldIsBlamedAtOnceWhenTheFloodReturns() throws Exception {
        final PeerPort port = listenUnderPressure();
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 20 * MS);
        link.pressure = false;
        sim.runFor(300 * MS);
        assertEquals(0, link.sourceRequests.getLast().length, "the list emptied after the hold");

        link.pressure = true;
        final long tcpDrops = counter(us, "tcp.drop.syn_pressure");
        final TcpConnection client = peer.connect(US, 80);
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 10 * MS);
        assertTrue(client.isConnected(), "connected as the flood returned, without a retry");
        assertEquals(tcpDrops, counter(us, "tcp.drop.syn_pressure"), "TCP dropped no SYN to the listener");
        assertArrayEquals(new int[] {FLOOD_SOURCE}, link.sourceRequests.getLast(), "the source listed again");
        assertEquals(List.of(), link.shedRequests, "no random filter");
    }

    /**
     * A single-source flood whose first millisecond straddles the table's halving: the table then holds fewer SYNs
     * than it needs to name a source, and the stack once took that for a flood from spread sources, so the link shed
     * every client's SYNs at random and TCP dropped them all (a veth run under load saw a second client wait for its retry). The
     * flood starts at every quarter millisecond of a window; each time the link is asked to drop that source only.
     */
    @Test
    void aSingleSourceFloodIsNeverTakenForASpreadOneWhereverTheWindowHalves() throws Exception {
        for (long offset = 0; offset < SynSources.WINDOW_NS; offset += MS / 4) {
            sim.close();
            sim = new Simulation();
            us = sim.addStack("us", "198.18.0.2/24", wire -> link = new PressureLink(wire, sim), builder -> { });
            peer = sim.addStack("peer", "198.18.0.1/24");
            final PeerPort port = new PeerPort(sim, "flood", MacAddress.parse("0a:00:00:00:00:66"));
            us.listen(80, 64);
            sim.runFor(10 * MS + offset);
            link.pressure = true;
            flood(port, TCP, () -> FLOOD_SOURCE, 8, 5 * MS);
            final long at = offset;
            assertEquals(List.of(), link.shedRequests, () -> "no random filter, flood at +" + at / 1_000 + " us");
            assertEquals(1, link.sourceRequests.size(), () -> "the source listed, flood at +" + at / 1_000 + " us");
            assertEquals(0, counter(us, "tcp.drop.syn_pressure"), () -> "TCP dropped no SYN, +" + at / 1_000 + " us");
        }
    }

    /**
     * A stack that handled one batch of a single source's flood and then was not polled for longer than four windows
     * (its thread busy or descheduled): the window halves its table to a few SYNs while the run's SYNs say "flood". It
     * waits for the SYNs that follow and lists the source; judged by time, it shed every client's SYNs at random.
     */
    @Test
    void aStackNotPolledForAWhileStillBlamesTheSingleSource() throws Exception {
        final PeerPort port = listenUnderPressure();
        for (int i = 0; i < 64; i++) {
            port.send(Frames.ethernet(link.macAddress(), port.mac(), EtherType.IPV4,
                Frames.ipv4(FLOOD_SOURCE, US, TCP, i, 0, 64, syn(FLOOD_SOURCE, 2048 + i, US, 80))));
        }
        sim.pollAll();
        sim.clock().advance(450 * MS);
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 5 * MS);
        assertEquals(List.of(), link.shedRequests, "no random filter");
        assertEquals(1, link.sourceRequests.size());
        assertArrayEquals(new int[] {FLOOD_SOURCE}, link.sourceRequests.get(0));
        assertEquals(0, counter(us, "tcp.drop.syn_pressure"));
    }

    /** A SYN flood from addresses spread over a /16: no few sources stand out, so the link sheds at random. */
    @Test
    void aFloodFromSpreadSourcesIsShedAtRandom() throws Exception {
        final PeerPort port = listenUnderPressure();
        final java.util.Random random = new java.util.Random(7);
        flood(port, TCP, () -> Ipv4Address.parse("198.19.0.0") | random.nextInt(1 << 16), 8, 20 * MS);
        assertEquals(List.of(true), link.shedRequests);
        assertEquals(List.of(), link.sourceRequests);
        assertEquals(1, counter(us, "stack.shed.random_filters"));
        assertEquals(0, counter(us, "stack.shed.syn_source_drops"));
        assertTrue(counter(us, "tcp.drop.syn_pressure") > 100, "TCP drops every SYN, as before");
    }

    /**
     * While the link drops one source's SYNs, a second source floods: pressure lasts again, and it joins the list.
     */
    @Test
    void aSecondFloodingSourceJoinsTheList() throws Exception {
        final PeerPort port = listenUnderPressure();
        flood(port, TCP, () -> FLOOD_SOURCE, 8, 20 * MS);
        final int second = FLOOD_SOURCE + 1;
        // The link would drop the first source's SYNs now; what the stack still sees is the second's.
        flood(port, TCP, () -> second, 8, 250 * MS);
        assertEquals(2, link.sourceRequests.size());
        assertArrayEquals(new int[] {FLOOD_SOURCE, second}, link.sourceRequests.get(1));
        assertEquals(List.of(), link.shedRequests);
        assertEquals(2, counter(us, "stack.shed.sources"));
    }

    /**
     * An IPv6 SYN flood is seen as a SYN flood (its SYNs counted by the tap in front of TCP's IPv6 input) and, its
     * sources being none the table or the links' filters hold, shed at random: before, IPv6 SYNs went uncounted and
     * the run was taken for pressure without a SYN flood, so nothing was shed at all.
     */
    @Test
    void anIpv6SynFloodIsShedAtRandom() throws Exception {
        final PressureLink[] six = new PressureLink[1];
        final NetStack stack = sim.addStack("six", "198.18.0.5/24", wire -> six[0] = new PressureLink(wire, sim),
            builder -> builder.ipv6(dev.tern.stack.testing.SimulatedSockets.ipv6Now("2001:db8::5/64")));
        stack.listen(80, 64);
        final PeerPort port = new PeerPort(sim, "flood6", MacAddress.parse("0a:00:00:00:00:67"));
        sim.runFor(10 * MS);
        six[0].pressure = true;
        final dev.tern.core.net.Ipv6Address to = dev.tern.core.net.Ipv6Address.parse("2001:db8::5");
        final dev.tern.core.net.Ipv6Address from = dev.tern.core.net.Ipv6Address.parse("2001:db8::66");
        final long end = sim.nowNs() + 30 * MS;
        int n = 0;
        while (sim.nowNs() < end) {
            for (int i = 0; i < 8; i++, n++) {
                port.send(Frames.ethernet(six[0].macAddress(), port.mac(), EtherType.IPV6,
                    ipv6Syn(from, to, 1024 + (n & 0x7fff), 80)));
            }
            sim.step(sim.nowNs() + 100_000);
        }
        assertEquals(List.of(true), six[0].shedRequests, "the random filter");
        assertEquals(List.of(), six[0].sourceRequests, "no IPv4 source to name");
        assertEquals(1, counter(stack, "stack.shed.random_filters"));
        assertEquals(0, counter(stack, "stack.shed.pressure_without_syn_flood"));
        assertTrue(counter(stack, "tcp.drop.syn_pressure") > 100, "TCP drops IPv6 SYNs under the flood too");
    }

    /** An IPv6 packet carrying a SYN from {@code source} to {@code destination}, its checksum right. */
    private static byte[] ipv6Syn(dev.tern.core.net.Ipv6Address source, dev.tern.core.net.Ipv6Address destination,
                                  int sourcePort, int destinationPort) {
        final byte[] tcp = java.nio.ByteBuffer.allocate(20).putShort((short) sourcePort)
            .putShort((short) destinationPort).putInt(sourcePort * 7919).putInt(0).put((byte) 0x50).put((byte) 0x02)
            .putShort((short) 65535).putInt(0).array();
        final int checksum = dev.tern.stack.testing.Ipv6Frames.checksum(source, destination, TCP, tcp);
        tcp[16] = (byte) (checksum >> 8);
        tcp[17] = (byte) checksum;
        return dev.tern.stack.testing.Ipv6Frames.packet(source, destination, TCP, 64, tcp);
    }
}
