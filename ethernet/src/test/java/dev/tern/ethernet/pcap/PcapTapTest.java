package dev.tern.ethernet.pcap;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.ExternalTools;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class PcapTapTest {
    private static final long A = MacAddress.parse("02:00:00:00:00:0a");
    private static final long B = MacAddress.parse("02:00:00:00:00:0b");

    @TempDir
    Path directory;

    @Test
    void tsharkDissectsWhatTheTapRecordedInBothDirections() {
        final Path tshark = ExternalTools.require("tshark", "tshark");
        final Path file = directory.resolve("tap.pcap");
        final VirtualClock clock = new VirtualClock(1_700_000_000_000_000_000L);
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build();
             PcapWriter writer = PcapWriter.create(file)) {
            final Link a = new PcapTap(wire.attach("a", A), writer, clock);
            final MemoryLink b = wire.attach("b", B);
            final TxFrame tx = new TxFrame();
            // a -> b: an ARP request (broadcast); b -> a: an IPv4 frame with a VLAN tag.
            a.claim(tx);
            writeArpRequest(tx, A);
            a.commit(tx);
            a.flush();
            clock.advance(1_500);
            b.claim(tx);
            new EthernetHeader().wrap(tx.segment(), tx.offset(), 64).destination(A).source(B).vlan(0x0064, EtherType.IPV4);
            writeIpv4(tx, 18);
            tx.length(64);
            b.commit(tx);
            b.flush();
            b.receive((s, o, l, f) -> { }, 10);
            a.receive((s, o, l, f) -> { }, 10);
            assertEquals(2, writer.frames());
        }
        final ExternalTools.Result result = ExternalTools.run(Duration.ofSeconds(60), tshark.toString(), "-r", file.toString(),
            "-T", "fields", "-E", "separator=|", "-e", "frame.time_epoch", "-e", "eth.src", "-e", "eth.dst",
            "-e", "_ws.col.Protocol", "-e", "vlan.id", "-e", "_ws.expert.message").orFail("tshark");
        final List<String> lines = result.stdout().lines().toList();
        assertEquals(2, lines.size(), result.stdout());
        assertEquals("1700000000.000000000|02:00:00:00:00:0a|ff:ff:ff:ff:ff:ff|ARP||", lines.get(0));
        assertEquals("1700000000.000001500|02:00:00:00:00:0b|02:00:00:00:00:0a|IPv4|100|", lines.get(1));
    }

    /**
     * A frame that asks the link for its checksums (the IPv4 header's, and UDP's from the pseudo-header sum the stack
     * left in the field, as on an offloading link) is recorded with both complete: tshark, checking them, finds them
     * good. The link still gets the frame as the stack made it.
     */
    @Test
    void checksumsTheLinkIsAskedToFillInAreRecordedCompleteAsTheWireCarriesThem() {
        final Path tshark = ExternalTools.require("tshark", "tshark");
        final Path file = directory.resolve("offload.pcap");
        final VirtualClock clock = new VirtualClock(1_700_000_000_000_000_000L);
        final int length = 14 + 20 + 8 + 10;
        final byte[] handedOver = new byte[length];
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build();
             PcapWriter writer = PcapWriter.create(file)) {
            final Link a = new PcapTap(wire.attach("a", A), writer, clock);
            final MemoryLink b = wire.attach("b", B);
            final TxFrame tx = new TxFrame();
            a.claim(tx);
            new EthernetHeader().wrap(tx.segment(), tx.offset(), length).destination(B).source(A).etherType(EtherType.IPV4);
            final long ip = tx.offset() + 14;
            tx.segment().asSlice(ip, length - 14).fill((byte) 0x5A);
            BigEndian.u16(tx.segment(), ip, 0x4500);
            BigEndian.u16(tx.segment(), ip + 2, length - 14);
            BigEndian.u16(tx.segment(), ip + 4, 7);
            BigEndian.u16(tx.segment(), ip + 6, 0);
            BigEndian.u8(tx.segment(), ip + 8, 64);
            BigEndian.u8(tx.segment(), ip + 9, 17);
            BigEndian.u16(tx.segment(), ip + 10, 0);
            BigEndian.i32(tx.segment(), ip + 12, 0xC6120001);
            BigEndian.i32(tx.segment(), ip + 16, 0xC6120002);
            final long udp = ip + 20;
            BigEndian.u16(tx.segment(), udp, 40000);
            BigEndian.u16(tx.segment(), udp + 2, 7);
            BigEndian.u16(tx.segment(), udp + 4, 18);
            BigEndian.u16(tx.segment(), udp + 6, dev.tern.core.checksum.InternetChecksum.fold(
                dev.tern.core.checksum.InternetChecksum.pseudoHeader(0xC6120001, 0xC6120002, 17, 18)));
            tx.length(length).requestIpChecksum().requestL4Checksum(14 + 20, 6);
            MemorySegment.copy(tx.segment(), ValueLayout.JAVA_BYTE, tx.offset(), handedOver, 0, length);
            a.commit(tx);
            a.flush();
            final byte[][] got = new byte[1][];
            b.receive((s, o, l, f) -> got[0] = s.asSlice(o, l).toArray(ValueLayout.JAVA_BYTE), 10);
            assertArrayEquals(handedOver, got[0], "the link carries the frame as the stack made it");
        }
        final ExternalTools.Result result = ExternalTools.run(Duration.ofSeconds(60), tshark.toString(), "-r", file.toString(),
            "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-T", "fields", "-E", "separator=|",
            "-e", "ip.checksum.status", "-e", "udp.checksum.status", "-e", "_ws.expert.message").orFail("tshark");
        assertEquals("1|1|", result.stdout().strip(), "good (1) IPv4 and UDP checksums: " + result.stdout());
    }

    private static void writeArpRequest(TxFrame tx, long sender) {
        new EthernetHeader().wrap(tx.segment(), tx.offset(), 60).destination(MacAddress.BROADCAST).source(sender).etherType(EtherType.ARP);
        final long p = tx.offset() + 14;
        BigEndian.u16(tx.segment(), p, 1);
        BigEndian.u16(tx.segment(), p + 2, EtherType.IPV4);
        BigEndian.u8(tx.segment(), p + 4, 6);
        BigEndian.u8(tx.segment(), p + 5, 4);
        BigEndian.u16(tx.segment(), p + 6, 1);
        BigEndian.u48(tx.segment(), p + 8, sender);
        BigEndian.i32(tx.segment(), p + 14, 0xC6120001);
        BigEndian.u48(tx.segment(), p + 18, 0);
        BigEndian.i32(tx.segment(), p + 24, 0xC6120002);
        tx.segment().asSlice(p + 28, 18).fill((byte) 0);
        tx.length(60);
    }

    /** A minimal IPv4 header (protocol 253, experimental) with a correct checksum, then zero padding. */
    private static void writeIpv4(TxFrame tx, int at) {
        final long p = tx.offset() + at;
        tx.segment().asSlice(p, 64 - at).fill((byte) 0);
        BigEndian.u16(tx.segment(), p, 0x4500);
        BigEndian.u16(tx.segment(), p + 2, 20);
        BigEndian.u8(tx.segment(), p + 8, 64);
        BigEndian.u8(tx.segment(), p + 9, 253);
        BigEndian.i32(tx.segment(), p + 12, 0xC6120001);
        BigEndian.i32(tx.segment(), p + 16, 0xC6120002);
        BigEndian.u16(tx.segment(), p + 10, dev.tern.core.checksum.InternetChecksum.compute(tx.segment(), p, 20));
    }
}
