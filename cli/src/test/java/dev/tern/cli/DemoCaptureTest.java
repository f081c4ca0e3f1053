package dev.tern.cli;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's capture, dissected by tshark: well-formed ARP, ICMP and UDP, correct checksums, reassembled fragments. */
class DemoCaptureTest {
    @Test
    void tsharkFindsWellFormedArpIcmpAndReassembledFragments(@TempDir Path directory) {
        final Path tshark = ExternalTools.require("tshark", "tshark");
        final Path pcap = directory.resolve("demo.pcap");
        assertEquals(0, TernCommandLineTest.tern("demo", "--pcap", pcap.toString(), "--tcp-mib", "1").status());

        // Retransmissions, duplicate ACKs and out-of-order segments are expected on a lossy, reordering wire: tshark
        // reports them as TCP analysis warnings, and a D-SACK (a retransmission that was not needed) as a warning of
        // its own; none is a fault in the frames.
        final List<String> bad = fields(tshark, pcap, "_ws.malformed || (_ws.expert.severity >= \"warning\" && !tcp.analysis "
            + "&& !tcp.options.sack.dsack) "
            + "|| ip.checksum.status == \"Bad\" || icmp.checksum.status == \"Bad\" || udp.checksum.status == \"Bad\" "
            + "|| tcp.checksum.status == \"Bad\"", "frame.number");
        assertEquals(List.of(), bad.subList(0, Math.min(20, bad.size())), "no malformed frame, no bad checksum");
        final List<String> tcpChecksums = fields(tshark, pcap, "tcp", "tcp.checksum.status");
        assertTrue(tcpChecksums.size() > 100 && tcpChecksums.stream().allMatch("1"::equals),
            "every TCP checksum verified good: " + tcpChecksums.stream().distinct().toList());
        final List<String> arp = fields(tshark, pcap, "arp", "arp.opcode");
        assertTrue(arp.contains("1") && arp.contains("2"), "ARP requests and replies: " + arp);
        assertTrue(fields(tshark, pcap, "arp.isannouncement == 1", "arp.src.proto_ipv4").contains("198.18.0.1"),
            "gratuitous announcement of our address");
        final List<String> echo = fields(tshark, pcap, "icmp.checksum.status == \"Good\"", "icmp.type");
        assertTrue(echo.contains("8") && echo.contains("0"), "echo requests and replies with good checksums");
        final List<String> pings = fields(tshark, pcap, "icmp && ip.reassembled.length", "ip.reassembled.length");
        assertTrue(pings.size() >= 2 && pings.stream().allMatch("60008"::equals),
            "60000-byte pings reassembled by tshark: " + pings);
        final List<String> datagrams = fields(tshark, pcap, "udp && ip.reassembled.length", "ip.reassembled.length");
        assertTrue(datagrams.size() >= 2 && datagrams.stream().allMatch("9008"::equals),
            "9000-byte UDP datagrams reassembled by tshark: " + datagrams);
        final List<String> udpChecksums = fields(tshark, pcap, "udp", "udp.checksum.status");
        assertTrue(!udpChecksums.isEmpty() && udpChecksums.stream().allMatch("1"::equals),
            "every UDP checksum verified good by tshark: " + udpChecksums.stream().distinct().toList());
    }

    private static List<String> fields(Path tshark, Path pcap, String filter, String field) {
        return ExternalTools.run(Duration.ofSeconds(120), tshark.toString(), "-r", pcap.toString(),
                "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
                "-Y", filter, "-T", "fields", "-e", field)
            .orFail("tshark").stdout().lines().toList();
    }
}
