package dev.tern.afpacket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Reads the frames of a classic pcap file (what {@code tcpdump -w} writes), for checking bytes on the wire. */
final class PcapFile {
    private static final int MAGIC_MICROS = 0xA1B2C3D4;
    private static final int MAGIC_NANOS = 0xA1B23C4D;

    private PcapFile() {
    }

    static List<byte[]> frames(Path file) throws IOException {
        final ByteBuffer buffer = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        final int magic = buffer.getInt(0);
        if (magic != MAGIC_MICROS && magic != MAGIC_NANOS) {
            buffer.order(ByteOrder.BIG_ENDIAN);
        }
        final int linkType = buffer.getInt(20);
        if (linkType != 1) {
            throw new IOException(file + ": link type " + linkType + ", expected Ethernet (1)");
        }
        final List<byte[]> frames = new ArrayList<>();
        int position = 24;
        while (position + 16 <= buffer.limit()) {
            final int captured = buffer.getInt(position + 8);
            position += 16;
            final byte[] frame = new byte[captured];
            buffer.get(position, frame);
            frames.add(frame);
            position += captured;
        }
        return frames;
    }
}
