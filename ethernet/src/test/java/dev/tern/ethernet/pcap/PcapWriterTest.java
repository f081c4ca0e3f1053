package dev.tern.ethernet.pcap;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.Pcaps;
import org.pcap4j.packet.namednumber.DataLinkType;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PcapWriterTest {
    /** who-has 198.18.0.2 tell 198.18.0.1, padded to 60 bytes. */
    private static final byte[] ARP = HexFormat.of().parseHex("ffffffffffff0a1b2c3d4e5f0806"
        + "0001080006040001" + "0a1b2c3d4e5f" + "c6120001" + "000000000000" + "c6120002" + "00".repeat(18));
    private static final long T0 = 1_700_000_000_123_456_789L;

    @TempDir
    Path directory;

    @Test
    void writesTheNanosecondGlobalHeaderAndOneRecordPerFrame() throws Exception {
        final Path file = directory.resolve("two.pcap");
        try (PcapWriter writer = PcapWriter.create(file)) {
            writer.write(MemorySegment.ofArray(ARP), 0, ARP.length, T0);
            writer.write(MemorySegment.ofArray(ARP), 6, 20, T0 + 1_000_000_001L);
            assertEquals(2, writer.frames());
        }
        final ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        assertEquals(24 + 16 + 60 + 16 + 20, bytes.remaining());
        assertEquals(0xa1b23c4d, bytes.getInt());
        assertEquals(2, bytes.getShort());
        assertEquals(4, bytes.getShort());
        assertEquals(0, bytes.getInt());
        assertEquals(0, bytes.getInt());
        assertEquals(PcapWriter.SNAPLEN, bytes.getInt());
        assertEquals(1, bytes.getInt());
        assertEquals(1_700_000_000, bytes.getInt());
        assertEquals(123_456_789, bytes.getInt());
        assertEquals(60, bytes.getInt());
        assertEquals(60, bytes.getInt());
        final byte[] first = new byte[60];
        bytes.get(first);
        assertArrayEquals(ARP, first);
        assertEquals(1_700_000_001, bytes.getInt());
        assertEquals(123_456_790, bytes.getInt());
        assertEquals(20, bytes.getInt());
        assertEquals(20, bytes.getInt());
        final byte[] second = new byte[20];
        bytes.get(second);
        assertArrayEquals(Arrays.copyOfRange(ARP, 6, 26), second);
    }

    @Test
    void aFrameBeyondTheSnapLengthIsCutAndKeepsItsOriginalLength() throws Exception {
        final Path file = directory.resolve("big.pcap");
        final byte[] big = new byte[PcapWriter.SNAPLEN + 100];
        big[PcapWriter.SNAPLEN - 1] = 7;
        try (PcapWriter writer = PcapWriter.create(file)) {
            writer.write(MemorySegment.ofArray(big), 0, big.length, T0);
        }
        final ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        assertEquals(24 + 16 + PcapWriter.SNAPLEN, bytes.remaining());
        bytes.position(24 + 8);
        assertEquals(PcapWriter.SNAPLEN, bytes.getInt());
        assertEquals(big.length, bytes.getInt());
        assertEquals(7, bytes.get(24 + 16 + PcapWriter.SNAPLEN - 1));
    }

    @Test
    void writingAfterCloseIsAClearError() {
        final PcapWriter writer = PcapWriter.create(directory.resolve("closed.pcap"));
        writer.close();
        writer.close();
        assertThrows(IllegalStateException.class, () -> writer.write(MemorySegment.ofArray(ARP), 0, ARP.length, T0));
    }

    /** An independent reader: libpcap itself (through pcap4j, a test-only dependency here) reads the file back. */
    @Test
    void libpcapReadsBackEveryFrameWithItsNanosecondTimestamp() throws Exception {
        final Path file = directory.resolve("libpcap.pcap");
        try (PcapWriter writer = PcapWriter.create(file)) {
            for (int i = 0; i < 3; i++) {
                writer.write(MemorySegment.ofArray(ARP), 0, ARP.length - i, T0 + i * 1_500L);
            }
        }
        final PcapHandle handle = Pcaps.openOffline(file.toString(), PcapHandle.TimestampPrecision.NANO);
        try {
            assertEquals(DataLinkType.EN10MB, handle.getDlt());
            for (int i = 0; i < 3; i++) {
                final byte[] frame = handle.getNextRawPacket();
                assertArrayEquals(Arrays.copyOf(ARP, ARP.length - i), frame);
                final java.sql.Timestamp at = handle.getTimestamp();
                assertEquals(T0 + i * 1_500L, at.getTime() / 1000 * 1_000_000_000L + at.getNanos());
            }
            assertNull(handle.getNextRawPacket());
        } finally {
            handle.close();
        }
    }

    @Test
    void tcpdumpReadsTheFile() throws Exception {
        final Path tcpdump = ExternalTools.require("tcpdump", "tcpdump");
        final Path file = directory.resolve("tcpdump.pcap");
        try (PcapWriter writer = PcapWriter.create(file)) {
            writer.write(MemorySegment.ofArray(ARP), 0, ARP.length, T0);
        }
        final ExternalTools.Result result = ExternalTools.run(Duration.ofSeconds(30), tcpdump.toString(), "-r",
            file.toString(), "-n", "-tt", "--nano").orFail("tcpdump");
        assertEquals("1700000000.123456789 ARP, Request who-has 198.18.0.2 tell 198.18.0.1, length 46",
            result.stdout().strip());
    }
}
