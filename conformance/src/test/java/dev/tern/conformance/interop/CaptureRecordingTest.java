package dev.tern.conformance.interop;

import dev.tern.afpacket.netns.BackgroundCommand;
import dev.tern.afpacket.netns.NetnsHarness;
import dev.tern.conformance.replay.Capture;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.conformance.replay.ReplayScript;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

import static dev.tern.afpacket.netns.NetnsHarness.PEER_IPV4;
import static dev.tern.afpacket.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Records the captures in {@code pcaps/}: each runs one exchange between the kernel and Tern in fresh namespaces,
 * with tcpdump on the kernel's end of the pair, and writes {@code NAME.pcap} plus {@code NAME.actions} (what Tern's
 * application did, for {@code CaptureReplayTest}). On demand only, never in CI:
 * <pre>
 * TERN_RECORD_PCAPS=1 mvn -pl conformance -am verify -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dtest='dev.tern.conformance.interop.CaptureRecordingTest'
 * </pre>
 * Each capture starts before Tern's stack does, so it holds Tern's whole life (both RFC 5227 announcements, 2 s
 * apart) and a replay can start where the recorded stack did. Offloads are off on both ends, so every checksum on
 * the wire is final. Each recording checks that it caught the exchange before it replaces a file.
 */
@EnabledIfEnvironmentVariable(named = "TERN_RECORD_PCAPS", matches = "1", disabledReason = "records pcaps/ on demand: TERN_RECORD_PCAPS=1")
class CaptureRecordingTest {
    /** Long enough for both announcements (at 0 s and 2 s) and the exchanges, which end by 1.8 s. */
    private static final long LIFETIME_NS = 2_600_000_000L;
    private static final int MAX_FRAMES = 200;

    private static Path pcapsDirectory() {
        final String configured = System.getProperty("tern.pcaps.dir");
        assertNotNull(configured, "tern.pcaps.dir (set by conformance/pom.xml)");
        return Path.of(configured);
    }

    @Test
    void recordKernelPingingTern() throws Exception {
        record("arp-icmp-kernel-pings-tern", VethSetup.DEFAULT, rig -> {
            assertEquals(3, rig.kernel().ping(3, 56, 0.2).received());
            assertEquals(2, rig.kernel().ping(2, 8000, 0.2).received());
        }, capture -> 2 + 2 + 3 * 2 + 2 * 12);
    }

    @Test
    void recordTernPingingTheKernel() throws Exception {
        record("arp-icmp-tern-pings-kernel", VethSetup.DEFAULT, rig -> {
            int sequence = 1;
            for (int size : new int[] {56, 56, 56, 8000, 8000}) {
                final long next = System.nanoTime() + 200_000_000L;
                assertNotNull(rig.pingKernelAndWait(sequence++, size));
                sleepUntil(next);
            }
        }, capture -> 2 + 2 + 3 * 2 + 2 * 12);
    }

    @Test
    void recordJumboEchoBothWays() throws Exception {
        record("icmp-echo-mtu9000", new VethSetup(9000, false), rig -> {
            assertEquals(2, rig.kernel().ping(2, 8000, 0.2).received());
            for (int sequence = 1; sequence <= 2; sequence++) {
                final long next = System.nanoTime() + 200_000_000L;
                assertNotNull(rig.pingKernelAndWait(sequence, 8000));
                sleepUntil(next);
            }
        }, capture -> 2 + 2 + 2 * 2 + 2 * 2);
    }

    @Test
    void recordProtocolUnreachable() throws Exception {
        record("icmp-protocol-unreachable", VethSetup.DEFAULT, rig -> {
            final List<byte[]> errors = rig.kernel().sendRawAndCollectIcmp(3, 2, IcmpErrorInteropTest.unusedProtocolDatagrams());
            assertEquals(2, errors.size());
        }, capture -> 2 + 2 + 2 * 2);
    }

    /**
     * Fragment 0 of one datagram and fragment 1 of another, never completed: after the 30-second reassembly timeout
     * Tern reports time exceeded (code 1) for the first only (RFC 792; RFC 1122 §3.3.2: only when fragment 0 came).
     * Takes 31 s to record; replays in milliseconds.
     */
    @Test
    void recordReassemblyTimeout() throws Exception {
        record("ipv4-reassembly-timeout", VethSetup.DEFAULT, rig -> {
            final List<byte[]> errors = rig.kernel().sendRawAndCollectIcmp(33, 1, incompleteFragments());
            assertEquals(1, errors.size());
            assertEquals(11, errors.getFirst()[20], "time exceeded");
            assertEquals(1, errors.getFirst()[21], "fragment reassembly time exceeded");
        }, capture -> 2 + 2 + 2 + 1);
    }

    /** Fragment 0 (MF, 64 bytes) of datagram 0x7E01 and fragment 1 (offset 64, MF) of datagram 0x7E02, both ICMP echo. */
    static byte[][] incompleteFragments() {
        final byte[] echo = Frames.echoRequest(0x7E57, 1, Frames.pattern(200, 5));
        final byte[] first = Frames.ipv4(PEER_IPV4, TERN_IPV4, 1, 0x7E01, 0x2000, 64, java.util.Arrays.copyOf(echo, 64));
        final byte[] middle = Frames.ipv4(PEER_IPV4, TERN_IPV4, 1, 0x7E02, 0x2000 | (64 / 8), 64,
            java.util.Arrays.copyOfRange(echo, 64, 128));
        return new byte[][] {first, middle};
    }

    interface Exchange {
        void run(VethRig rig) throws Exception;
    }

    interface ExpectedFrames {
        int count(Capture capture);
    }

    private static void record(String name, VethSetup setup, Exchange exchange, ExpectedFrames expected) throws Exception {
        final Path directory = pcapsDirectory();
        Files.createDirectories(directory);
        final Path temporary = Files.createTempFile("tern-capture", ".pcap");
        final List<String> actions = new ArrayList<>();
        try (VethRig rig = VethRig.create(setup)) {
            final BackgroundCommand tcpdump = rig.kernel().tcpdump(temporary, MAX_FRAMES);
            final long started = System.nanoTime();
            rig.startTern();
            exchange.run(rig);
            sleepUntil(started + LIFETIME_NS);
            KernelPeer.stopCapture(tcpdump, temporary, MAX_FRAMES);
            actions.addAll(rig.actions());
            final Capture capture = Capture.read(temporary);
            final List<CapturedFrame> frames = capture.frames();
            assertEquals(expected.count(capture), frames.size(), "frames caught for " + name + ": " + frames);
            assertTrue(frames.getFirst().source() == rig.ternMac() && frames.getFirst().isArp(),
                "the capture starts with Tern's first announcement");
            assertTrue(Files.size(temporary) < 100_000, name + " is small");
        }
        Files.move(temporary, directory.resolve(name + ".pcap"), StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(directory.resolve(name + ".pcap"), PosixFilePermissions.fromString("rw-r--r--"));
        final List<String> script = new ArrayList<>();
        script.add("# What Tern's application did while " + name + ".pcap was recorded (see pcaps/README.md).");
        script.add("# Recorded by dev.tern.conformance.interop.CaptureRecordingTest; replayed by CaptureReplayTest.");
        script.add("# kernel peer " + NetnsHarness.PEER_ADDRESS + ", veth MTU " + setup.mtu() + ", offloads off on both ends");
        script.addAll(actions);
        Files.write(directory.resolve(name + ".actions"), script);
        ReplayScript.read(directory.resolve(name + ".actions"));
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        final long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
        }
    }
}
