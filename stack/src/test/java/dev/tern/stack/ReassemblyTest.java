package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.stack.sim.Simulation;
import dev.tern.stack.testing.Frames;
import dev.tern.stack.testing.PeerPort;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Fragment reassembly against a reference model built on a {@link TreeMap}: random datagram sizes, fragment sizes
 * and orders, exact duplicates, overlapping fragments and missing fragments, all fed to a stack as frames. The
 * stack must deliver exactly the datagrams the model completes, byte for byte, discard exactly where the model
 * discards, and after the timeout answer ICMP time exceeded exactly when fragment 0 of an unfinished datagram came.
 */
class ReassemblyTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int US = Ipv4Address.parse("198.18.0.2");
    private static final int PEER = Ipv4Address.parse("198.18.0.1");
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final int PROTOCOL = 253;

    /** A fragment as sent: payload range and the MF flag. */
    record Fragment(int start, int end, boolean more) {
    }

    /** What the model predicts for one sequence of fragments of one datagram id. */
    static final class Model {
        final List<Integer> deliveredLengths = new ArrayList<>();
        int duplicates;
        int overlapDiscards;
        int inconsistentDiscards;
        int timeExceeded;
        int timeouts;
        private TreeMap<Integer, Integer> ranges;
        private int total;
        private boolean haveFirst;

        void accept(Fragment f) {
            if (f.start() == 0 && !f.more()) {
                deliveredLengths.add(f.end()); // not a fragment at all: a whole datagram, delivered as it is
                return;
            }
            if (ranges == null) {
                ranges = new TreeMap<>();
                total = -1;
                haveFirst = false;
            }
            final Integer existingEnd = ranges.get(f.start());
            if (existingEnd != null && existingEnd == f.end()) {
                duplicates++;
                return;
            }
            for (Map.Entry<Integer, Integer> range : ranges.entrySet()) {
                if (f.start() < range.getValue() && range.getKey() < f.end()) {
                    overlapDiscards++;
                    ranges = null;
                    return;
                }
            }
            if (!f.more()) {
                if ((total >= 0 && total != f.end()) || (!ranges.isEmpty() && ranges.lastEntry().getValue() > f.end())) {
                    inconsistentDiscards++;
                    ranges = null;
                    return;
                }
                total = f.end();
            } else if (total >= 0 && f.end() > total) {
                inconsistentDiscards++;
                ranges = null;
                return;
            }
            ranges.put(f.start(), f.end());
            haveFirst |= f.start() == 0;
            final int covered = ranges.entrySet().stream().mapToInt(r -> r.getValue() - r.getKey()).sum();
            if (total >= 0 && covered == total && haveFirst) {
                deliveredLengths.add(total);
                ranges = null;
            }
        }

        void timeout() {
            if (ranges != null) {
                timeouts++;
                timeExceeded += haveFirst ? 1 : 0;
                ranges = null;
            }
        }
    }

    @Test
    void agreesWithTheTreeMapModel() {
        qt().withExamples(150).forAll(longs().all()).checkAssert(seed -> {
            final Random random = new Random(seed);
            final int length = 8 + random.nextInt(random.nextBoolean() ? 3000 : 20000);
            final byte[] payload = Frames.pattern(length, (int) (long) seed);
            final List<Fragment> fragments = fragments(random, length);
            final Model model = new Model();
            fragments.forEach(model::accept);
            model.timeout();
            check(seed, payload, fragments, model);
        });
    }

    /** Cuts a datagram at random multiples of 8, shuffles, and sometimes duplicates, overlaps or loses a piece. */
    private static List<Fragment> fragments(Random random, int length) {
        final List<Fragment> pieces = new ArrayList<>();
        for (int start = 0; start < length; ) {
            final int size = 8 * (1 + random.nextInt(random.nextBoolean() ? 20 : 185));
            final int end = Math.min(length, start + size);
            pieces.add(new Fragment(start, end, end < length));
            start = end;
        }
        if (pieces.size() > 100) {
            return fragments(random, length / 2 + 8);
        }
        if (pieces.size() > 1 && random.nextInt(5) == 0) {
            pieces.remove(random.nextInt(pieces.size())); // a gap: never completes
        }
        for (int d = random.nextInt(3); d > 0 && !pieces.isEmpty(); d--) {
            pieces.add(pieces.get(random.nextInt(pieces.size()))); // exact duplicate
        }
        if (random.nextInt(4) == 0) {
            final int start = 8 * random.nextInt(Math.max(1, (length - 1) / 8));
            final int end = Math.min(length, start + 8 * (1 + random.nextInt(40)));
            pieces.add(new Fragment(start, end, end < length)); // may overlap others (or duplicate one exactly)
        }
        Collections.shuffle(pieces, random);
        return pieces;
    }

    private static void check(long seed, byte[] payload, List<Fragment> fragments, Model model) {
        try (Simulation sim = new Simulation()) {
            final PeerPort peer = new PeerPort(sim, "peer", PEER_MAC);
            final NetStack stack = sim.addStack("us", "198.18.0.2/24");
            final List<byte[]> delivered = new ArrayList<>();
            stack.ipv4().register(PROTOCOL, new IpProtocolHandler() {
                @Override
                public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
                    final byte[] bytes = new byte[length];
                    MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
                    delivered.add(bytes);
                }
            });
            peer.send(Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, Frames.arp(1, PEER_MAC, PEER, 0, US)));
            sim.runFor(5 * SECOND);
            peer.clear();
            for (Fragment f : fragments) {
                final int flags = (f.more() ? Ipv4Header.FLAG_MORE_FRAGMENTS : 0) | (f.start() >>> 3);
                peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4, Frames.ipv4(PEER, US, PROTOCOL,
                    4242, flags, 64, Arrays.copyOfRange(payload, f.start(), f.end()))));
                sim.pollAll();
            }
            sim.runFor(40 * SECOND);
            final String context = "seed " + seed + ", " + payload.length + " bytes, fragments " + fragments;
            assertEquals(model.deliveredLengths.size(), delivered.size(), context);
            for (byte[] datagram : delivered) {
                assertArrayEquals(payload, datagram, context);
            }
            assertEquals(model.duplicates, stack.counters().value("ipv4.reasm.duplicates"), context);
            assertEquals(model.overlapDiscards, stack.counters().value("ipv4.reasm.overlap_discards"), context);
            assertEquals(model.inconsistentDiscards, stack.counters().value("ipv4.reasm.inconsistent_discards"), context);
            assertEquals(model.timeouts, stack.counters().value("ipv4.reasm.timeouts"), context);
            final List<PeerPort.Received> timeExceeded = peer.drain(f -> f.icmpType() == IcmpHeader.TIME_EXCEEDED);
            assertEquals(model.timeExceeded, timeExceeded.size(), context);
        }
    }

    @Test
    void aDatagramLargerThan65535BytesIsRejected() {
        // "Ping of death": a last fragment at offset 65528 with 16 bytes would make 65564.
        final Model model = new Model();
        try (Simulation sim = new Simulation()) {
            final PeerPort peer = new PeerPort(sim, "peer", PEER_MAC);
            final NetStack stack = sim.addStack("us", "198.18.0.2/24");
            peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4,
                Frames.ipv4(PEER, US, PROTOCOL, 1, 65528 >>> 3, 64, new byte[16])));
            sim.runFor(SECOND);
            assertEquals(1, stack.counters().value("ipv4.reasm.bad_fragments"));
            assertEquals(0, model.timeouts);
        }
    }

    @Test
    void whenEverySlotIsBusyTheOldestDatagramIsEvicted() {
        try (Simulation sim = new Simulation()) {
            final PeerPort peer = new PeerPort(sim, "peer", PEER_MAC);
            final NetStack stack = sim.addStack("us", "198.18.0.2/24");
            for (int id = 0; id < 70; id++) {
                peer.send(Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4,
                    Frames.ipv4(PEER, US, PROTOCOL, id, Ipv4Header.FLAG_MORE_FRAGMENTS, 64, new byte[8])));
                sim.runFor(1_000_000L);
            }
            assertEquals(6, stack.counters().value("ipv4.reasm.evicted"), "64 slots by default");
        }
    }
}
