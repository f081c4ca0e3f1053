package dev.tern.tcp;

import dev.tern.core.time.TimerWheel;
import dev.tern.tcp.testing.Captured;
import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Pacing for a control that does not pace itself (CUBIC): off by default, on with {@link TcpConfig#pacing} or an
 * owner's SO_MAX_PACING_RATE, at Linux's rate from cwnd and SRTT; and Linux's TSO autosizing of a paced frame.
 */
class CwndPacingTest {
    static final int SEGMENTS = 10;
    static final long RTT = 10 * MS;

    /** The initial window of ten segments written at once, after a handshake of {@link #RTT}; what went, when. */
    static List<Captured> initialWindow(TcpHarness h) {
        h.write(bytes(SEGMENTS * 1460));
        h.advance(30 * MS);
        final List<Captured> sent = h.pending();
        assertEquals(SEGMENTS, sent.size(), "the whole initial window went: " + sent);
        return sent;
    }

    static long span(List<Captured> sent) {
        return sent.getLast().atNs() - sent.getFirst().atNs();
    }

    @Test
    void cubicIsNotPacedByDefault() {
        try (TcpHarness h = TcpHarness.establishedAfter(RTT, TcpHarness.config().build(), TcpOptions.DEFAULT,
            Seg.SYN_ACK)) {
            assertEquals(0, h.tcp.info(h.conn).pacingRate());
            assertEquals(0, span(initialWindow(h)), "the window leaves in one burst");
        }
    }

    @Test
    void withPacingCubicIsPacedAtTwiceCwndPerRttInSlowStart() {
        try (TcpHarness h = TcpHarness.establishedAfter(RTT, TcpHarness.config().pacing(true).build(),
            TcpOptions.DEFAULT, Seg.SYN_ACK)) {
            final TcpInfo info = h.tcp.info(h.conn);
            final long rate = info.pacingRate();
            assertEquals(Pacer.linuxRate(info.cwnd(), info.ssthresh(), 0, (int) (info.srttNs() / 1000)), rate);
            assertEquals(2L * info.cwnd() * 1_000_000_000L / info.srttNs(), rate, rate / 1000.0,
                "200 % of cwnd per SRTT in slow start");
            final List<Captured> sent = initialWindow(h);
            // Nine gaps of one segment at the rate, within a wheel tick either way (the wheel's resolution).
            final long expected = (SEGMENTS - 1) * (long) sent.getFirst().payload().length * 1_000_000_000L / rate;
            assertTrue(Math.abs(span(sent) - expected) <= TimerWheel.TICK_NS + MS / 10,
                "spread over " + span(sent) / 1e3 + " µs, paced " + expected / 1e3 + " µs");
            for (int i = 2; i < sent.size(); i++) {
                assertTrue(sent.get(i).atNs() - sent.get(i - 2).atNs() > 0, "never three segments at once: " + i);
            }
        }
    }

    @Test
    void aMaxPacingRateCapsAndTurnsPacingOnAsInLinux() {
        try (TcpHarness h = TcpHarness.establishedAfter(RTT, TcpHarness.config().build(), TcpOptions.DEFAULT,
            Seg.SYN_ACK)) {
            final TcpSocketOptions options = h.tcp.socketOptions();
            final long cap = 1_460_000; // a segment a millisecond
            assertEquals(-TcpError.INVALID, options.maxPacingRate(h.conn, -1));
            assertEquals(0, options.maxPacingRate(h.conn, cap));
            assertEquals(cap, options.maxPacingRate(h.conn));
            assertEquals(cap, h.tcp.info(h.conn).pacingRate(), "Linux's rate is above the cap");
            final List<Captured> sent = initialWindow(h);
            assertTrue(span(sent) >= (SEGMENTS - 1) * MS - TimerWheel.TICK_NS, span(sent) / 1e3 + " µs");
            assertEquals(0, options.maxPacingRate(h.conn, 0));
            assertEquals(0, h.tcp.info(h.conn).pacingRate(), "without the cap CUBIC is unpaced again");
        }
    }

    @Test
    void theCapBoundsAControlThatPacesItself() {
        try (TcpHarness h = TcpHarness.establishedAfter(RTT, TcpHarness.config()
            .congestionControl(BbrCongestionControl.NAME).build(), TcpOptions.DEFAULT, Seg.SYN_ACK)) {
            final long bbrRate = h.tcp.info(h.conn).pacingRate();
            assertTrue(bbrRate > 100_000, "BBR paces from the start: " + bbrRate);
            h.tcp.socketOptions().maxPacingRate(h.conn, bbrRate / 4);
            assertEquals(bbrRate / 4, h.tcp.info(h.conn).pacingRate());
        }
    }

    @Test
    void linuxRateFollowsTcpUpdatePacingRate() {
        assertEquals(2_920_000L, Pacer.linuxRate(14_600, Integer.MAX_VALUE, 0, 10_000));
        assertEquals(12_000_000L, Pacer.linuxRate(100_000, 100_000, 0, 10_000), "1.2 cwnd per RTT");
        assertEquals(24_000_000L, Pacer.linuxRate(100_000, 100_000, 200_000, 10_000),
            "the data in flight when above cwnd");
        assertEquals(0, Pacer.linuxRate(14_600, Integer.MAX_VALUE, 0, 0), "unpaced before an RTT sample");
    }

    @Test
    void aFrameHoldsAboutAMillisecondOfTheRateFromTwoSegmentsTo64KiB() {
        assertEquals(Pacer.MIN_FRAME_SEGMENTS, Pacer.frameSegments(100_000, 1448, 40_000));
        assertEquals(6, Pacer.frameSegments(10_000_000, 1448, 40_000), "9765 bytes of a 10 MB/s rate");
        assertEquals(45, Pacer.frameSegments(1_250_000_000, 1448, 40_000), "64 KiB at 10 Gbit/s");
        assertEquals(45, Pacer.frameSegments(10_000_000, 1448, 100), "64 KiB more on a path under 512 µs");
        qt().forAll(longs().between(1, 10_000_000_000L), integers().between(536, 9000),
                integers().between(0, 1_000_000))
            .check((rate, mss, minRtt) -> {
                final int segments = Pacer.frameSegments(rate, mss, minRtt);
                final long bytes = (long) segments * mss;
                return segments >= Pacer.MIN_FRAME_SEGMENTS
                    && (segments == Pacer.MIN_FRAME_SEGMENTS || bytes <= Pacer.MAX_FRAME_BYTES)
                    && (bytes + mss > Math.min(rate >> 10, Pacer.MAX_FRAME_BYTES));
            });
    }
}
