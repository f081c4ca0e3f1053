package dev.tern.conformance.replay;

import dev.tern.core.testing.ExternalTools;
import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Wireshark's dissectors judge Tern's frames in every committed capture: none malformed, none with an expert warning,
 * every IPv4 header checksum and every ICMP, IGMP, UDP and TCP checksum good ({@code -o ip.check_checksum:TRUE
 * -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE}; the checksums of fragmented messages are checked on the
 * datagram tshark reassembles, in the frame of the last fragment).
 */
class CaptureDissectionTest {
    static List<Path> captures() {
        return Pcaps.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("captures")
    void tsharkFindsTernsFramesWellFormedWithGoodChecksums(Path pcap) {
        final Path tshark = ExternalTools.require("tshark", "tshark");
        final ReplayScript script = ReplayScript.read(ReplayScript.besides(pcap));
        final String tern = "eth.src == " + MacAddress.format(script.start().mac());
        final Capture capture = Capture.read(pcap);
        final List<CapturedFrame> ternFrames = capture.sentBy(script.start().mac());

        assertEquals(List.of(), frames(tshark, pcap, tern + " && (_ws.malformed || _ws.expert.severity >= \"warning\""
            + " || ip.checksum.status == \"Bad\" || icmp.checksum.status == \"Bad\" || igmp.checksum.status == \"Bad\""
            + " || udp.checksum.status == \"Bad\" || tcp.checksum.status == \"Bad\")"), "malformed or bad frames from Tern");
        assertEquals(ternFrames.size(), frames(tshark, pcap, tern).size(), "tshark sees every frame Tern sent");
        final long ipv4 = ternFrames.stream().filter(CapturedFrame::isIpv4).count();
        assertEquals(ipv4, frames(tshark, pcap, tern + " && ip.checksum.status == \"Good\"").size(),
            "every IPv4 header checksum verified good");
        final long icmpMessages = ternFrames.stream().filter(f -> f.ipProtocol() == 1
            && (f.u16(14 + 6) & 0x2000) == 0).count();
        assertEquals(icmpMessages, frames(tshark, pcap, tern + " && icmp.checksum.status == \"Good\"").size(),
            "every ICMP message (the last fragment carries a reassembled one) has a good checksum");
        assertEquals(lastFragments(ternFrames, 2), frames(tshark, pcap, tern + " && igmp.checksum.status == \"Good\"").size(),
            "every IGMP message has a good checksum");
        assertEquals(lastFragments(ternFrames, 17), frames(tshark, pcap, tern + " && !icmp && udp.checksum.status == \"Good\"").size(),
            "every UDP datagram (the last fragment carries a reassembled one) has a good checksum");
        assertEquals(lastFragments(ternFrames, 6), frames(tshark, pcap, tern + " && !icmp && tcp.checksum.status == \"Good\"").size(),
            "every TCP segment has a good checksum");
        final long arp = ternFrames.stream().filter(CapturedFrame::isArp).count();
        assertEquals(arp, frames(tshark, pcap, tern + " && arp").size());
        assertTrue(arp >= 2, "both RFC 5227 announcements");
    }

    /** Frames of {@code protocol} that end a datagram (unfragmented, or the last fragment). */
    private static long lastFragments(List<CapturedFrame> frames, int protocol) {
        return frames.stream().filter(f -> f.ipProtocol() == protocol && (f.u16(14 + 6) & 0x2000) == 0).count();
    }

    private static List<String> frames(Path tshark, Path pcap, String filter) {
        return ExternalTools.run(Duration.ofSeconds(60), tshark.toString(), "-r", pcap.toString(), "-o",
                "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-Y", filter,
                "-T", "fields", "-e", "frame.number")
            .orFail("tshark").stdout().lines().filter(l -> !l.isBlank()).toList();
    }
}
