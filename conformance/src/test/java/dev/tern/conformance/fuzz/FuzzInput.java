package dev.tern.conformance.fuzz;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte format every Tern fuzz harness reads: a sequence of records, each one frame (or packet, or message: the
 * harness says what it wraps) and when it arrives. A sequence, not one frame, so the fuzzer reaches state: fragments
 * that complete a datagram, ARP exchanges, timers.
 *
 * <pre>
 *   input   := record*                       at most {@value #MAX_RECORDS} records are read
 *   record  := control:u8  length:u16 (big-endian)  bytes[length]
 *              a record cut short by the end of the input keeps the bytes there are
 *   control := bits 0-3  time to wait before this record: 0 none, k 2^(k-1) ms (1 ms ... 16.4 s)
 *              bit  4    the link says the checksums were verified  (Offloads.RX_CHECKSUM_OK)
 *              bit  5    the link says the L4 checksum is partial   (Offloads.RX_CHECKSUM_PARTIAL)
 *              bits 6-7  the harness's own choices (fix checksums, broadcast, ...)
 * </pre>
 */
public record FuzzInput(List<Record> records) {
    public static final int MAX_RECORDS = 64;
    public static final int CHECKSUM_OK = 1 << 4;
    public static final int CHECKSUM_PARTIAL = 1 << 5;
    public static final int OPTION_A = 1 << 6;
    public static final int OPTION_B = 1 << 7;

    /** One record: its control byte and its bytes. */
    public record Record(int control, byte[] bytes) {
        /** Nanoseconds to wait before this record arrives. */
        public long delayNs() {
            final int code = control & 0x0F;
            return code == 0 ? 0 : (1L << (code - 1)) * 1_000_000L;
        }

        public boolean has(int bit) {
            return (control & bit) != 0;
        }

        /** The link's receive flags the control byte asks for. */
        public int rxFlags() {
            return (has(CHECKSUM_OK) ? dev.tern.ethernet.link.Offloads.RX_CHECKSUM_OK : 0)
                | (has(CHECKSUM_PARTIAL) ? dev.tern.ethernet.link.Offloads.RX_CHECKSUM_PARTIAL : 0);
        }
    }

    public static FuzzInput parse(byte[] data) {
        final List<Record> records = new ArrayList<>();
        int at = 0;
        while (at < data.length && records.size() < MAX_RECORDS) {
            final int control = data[at++] & 0xFF;
            int length = 0;
            if (at + 2 <= data.length) {
                length = ((data[at] & 0xFF) << 8) | (data[at + 1] & 0xFF);
                at += 2;
            } else {
                at = data.length;
            }
            length = Math.min(length, data.length - at);
            final byte[] bytes = new byte[length];
            System.arraycopy(data, at, bytes, 0, length);
            at += length;
            records.add(new Record(control, bytes));
        }
        return new FuzzInput(List.copyOf(records));
    }

    /** The bytes that {@link #parse} reads back as {@code records} (seed corpora are written with this). */
    public static byte[] encode(List<Record> records) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Record record : records) {
            if (record.bytes().length > 0xFFFF) {
                throw new IllegalArgumentException("a record holds at most 65535 bytes");
            }
            out.write(record.control());
            out.write(record.bytes().length >>> 8);
            out.write(record.bytes().length & 0xFF);
            out.writeBytes(record.bytes());
        }
        return out.toByteArray();
    }

    /** The control code (bits 0-3) for the shortest listed wait at least {@code delayNs} long, capped at 16.4 s. */
    public static int delayCode(long delayNs) {
        if (delayNs <= 0) {
            return 0;
        }
        for (int code = 1; code < 15; code++) {
            if ((1L << (code - 1)) * 1_000_000L >= delayNs) {
                return code;
            }
        }
        return 15;
    }
}
