package dev.tern.core.counters;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The counters of one stack as read from its {@link CountersFile} at one moment: what {@code tern stat} prints.
 *
 * @param file     the counters file
 * @param name     the stack's name
 * @param pid      the process that owns the stack
 * @param alive    whether that process is still running (a dead one left a stale file behind)
 * @param counters label to value, in allocation order
 */
public record CountersSnapshot(Path file, String name, long pid, boolean alive, Map<String, Long> counters) {

    /** Reads every counters file in {@code directory}, oldest first; files that are not counters files are skipped. */
    public static List<CountersSnapshot> readAll(Path directory) throws IOException {
        final List<CountersSnapshot> snapshots = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return snapshots;
        }
        final List<Path> files;
        try (Stream<Path> listing = Files.list(directory)) {
            files = listing.filter(p -> p.getFileName().toString().endsWith(CountersFile.SUFFIX)).sorted().toList();
        }
        for (Path file : files) {
            final CountersSnapshot snapshot = read(file);
            if (snapshot != null) {
                snapshots.add(snapshot);
            }
        }
        return snapshots;
    }

    /** Reads one counters file; returns null when it is not (or not yet) a complete counters file. */
    public static CountersSnapshot read(Path file) throws IOException {
        try (Arena arena = Arena.ofConfined();
             FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final long size = channel.size();
            if (size < CountersFile.HEADER_LENGTH) {
                return null;
            }
            final MemorySegment memory = channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            if ((int) ValueLayout.JAVA_INT.varHandle().getAcquire(memory, (long) CountersFile.MAGIC_OFFSET) != CountersFile.MAGIC
                || memory.get(ValueLayout.JAVA_INT, CountersFile.VERSION_OFFSET) != CountersFile.VERSION) {
                return null;
            }
            final int metadataLength = memory.get(ValueLayout.JAVA_INT, CountersFile.METADATA_LENGTH_OFFSET);
            final int valuesLength = memory.get(ValueLayout.JAVA_INT, CountersFile.VALUES_LENGTH_OFFSET);
            if (metadataLength < 0 || valuesLength < 0
                || CountersFile.HEADER_LENGTH + (long) metadataLength + valuesLength > size) {
                return null;
            }
            final long pid = memory.get(ValueLayout.JAVA_LONG, CountersFile.PID_OFFSET);
            final String name = readName(memory);
            final CountersReader reader = new CountersReader(
                new UnsafeBuffer(memory.address() + CountersFile.HEADER_LENGTH, metadataLength),
                new UnsafeBuffer(memory.address() + CountersFile.HEADER_LENGTH + metadataLength, valuesLength),
                StandardCharsets.US_ASCII);
            final Map<String, Long> counters = new LinkedHashMap<>();
            reader.forEach((id, label) -> counters.put(label, reader.getCounterValue(id)));
            final boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
            return new CountersSnapshot(file, name, pid, alive, counters);
        }
    }

    private static String readName(MemorySegment memory) {
        final byte[] bytes = new byte[CountersFile.NAME_LENGTH];
        MemorySegment.copy(memory, ValueLayout.JAVA_BYTE, CountersFile.NAME_OFFSET, bytes, 0, bytes.length);
        int length = 0;
        while (length < bytes.length && bytes[length] != 0) {
            length++;
        }
        return new String(bytes, 0, length, StandardCharsets.US_ASCII);
    }
}
