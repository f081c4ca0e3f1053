package dev.tern.core.counters;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The counters of one stack: Agrona counters in a memory-mapped file, so that {@code tern stat} in another process
 * can read a running stack's counters without disturbing it.
 *
 * <pre>
 *   0                   4                   8
 *   +-------------------+-------------------+
 *   | magic "TERN"      | layout version    |   magic is written last, with release ordering:
 *   +-------------------+-------------------+   a reader that sees it sees a complete header
 *   | process id (long)                     |  8
 *   +---------------------------------------+
 *   | start time, ms since the epoch (long) | 16
 *   +-------------------+-------------------+
 *   | metadata length   | values length     | 24
 *   +-------------------+-------------------+
 *   | stack name, ASCII, NUL padded (64)    | 32
 *   +---------------------------------------+
 *   | reserved                              | 96
 *   +---------------------------------------+
 *   | Agrona counter metadata               | 128             maxCounters x METADATA_LENGTH (512)
 *   +---------------------------------------+
 *   | Agrona counter values                 | 128 + metadata  maxCounters x COUNTER_LENGTH (128)
 *   +---------------------------------------+
 * </pre>
 *
 * <p>The file lives in the counters directory ({@link #defaultDirectory()}) as {@code NAME-PID-N.counters} and is
 * deleted when the stack closes. A stack made only for a test may keep its counters in memory instead
 * ({@link #inMemory}).
 *
 * <p>Counters are allocated on the cold path (stack construction). Updating one ({@code incrementRelease} by the
 * single writing shard) is a plain store and allocates nothing. Allocation is not thread-safe; reading is.
 */
public final class CountersFile implements AutoCloseable {
    public static final int MAGIC = 0x5445524E; // "TERN"
    public static final int VERSION = 1;
    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int PID_OFFSET = 8;
    static final int START_TIME_OFFSET = 16;
    static final int METADATA_LENGTH_OFFSET = 24;
    static final int VALUES_LENGTH_OFFSET = 28;
    static final int NAME_OFFSET = 32;
    static final int NAME_LENGTH = 64;
    static final int HEADER_LENGTH = 128;
    public static final String SUFFIX = ".counters";

    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final Arena arena;
    private final Path path;
    private final String name;
    private final CountersManager manager;

    private CountersFile(Arena arena, MemorySegment memory, Path path, String name, int maxCounters) {
        this.arena = arena;
        this.path = path;
        this.name = name;
        final int metadataLength = maxCounters * CountersReader.METADATA_LENGTH;
        final int valuesLength = maxCounters * CountersReader.COUNTER_LENGTH;
        memory.set(ValueLayout.JAVA_INT, VERSION_OFFSET, VERSION);
        memory.set(ValueLayout.JAVA_LONG, PID_OFFSET, ProcessHandle.current().pid());
        memory.set(ValueLayout.JAVA_LONG, START_TIME_OFFSET, System.currentTimeMillis());
        memory.set(ValueLayout.JAVA_INT, METADATA_LENGTH_OFFSET, metadataLength);
        memory.set(ValueLayout.JAVA_INT, VALUES_LENGTH_OFFSET, valuesLength);
        final byte[] nameBytes = name.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(nameBytes, 0, memory, ValueLayout.JAVA_BYTE, NAME_OFFSET, Math.min(nameBytes.length, NAME_LENGTH - 1));
        final UnsafeBuffer metadata = new UnsafeBuffer(memory.address() + HEADER_LENGTH, metadataLength);
        final UnsafeBuffer values = new UnsafeBuffer(memory.address() + HEADER_LENGTH + metadataLength, valuesLength);
        this.manager = new CountersManager(metadata, values, StandardCharsets.US_ASCII);
        ValueLayout.JAVA_INT.varHandle().setRelease(memory, (long) MAGIC_OFFSET, MAGIC);
    }

    /** The environment variable that names the counters directory (stacks and {@code tern stat} agree on it). */
    public static final String DIRECTORY_VARIABLE = "TERN_COUNTERS_DIR";
    /** The system property that names the counters directory, before {@link #DIRECTORY_VARIABLE}. */
    public static final String DIRECTORY_PROPERTY = "tern.counters.dir";
    /** Default directories are {@code tern-USER} under {@link #defaultBase()}; before per-user ones, {@code tern}. */
    static final String DIRECTORY_PREFIX = "tern";

    /**
     * The directory stacks publish their counters in: {@code -Dtern.counters.dir}, else {@code $TERN_COUNTERS_DIR},
     * else this user's own, {@code tern-USER} under {@link #defaultBase()} ({@code /dev/shm/tern-alice}).
     *
     * <p>Per user because a directory one user created (root, say, with umask 022) is not writable by the next: one
     * shared {@code /dev/shm/tern} made every other user's stack fail once root had run Tern. Readers
     * ({@code tern stat}) look in every user's directory ({@link #defaultReadDirectories()}), so they still see all.
     */
    public static Path defaultDirectory() {
        final Path configured = configuredDirectory();
        return configured != null ? configured : userDirectory();
    }

    /** This user's default directory, {@code tern-USER} under {@link #defaultBase()}. */
    public static Path userDirectory() {
        return defaultBase().resolve(DIRECTORY_PREFIX + "-" + userTag());
    }

    /** The directory the property or the environment variable names, or null when neither does. */
    public static Path configuredDirectory() {
        final String property = System.getProperty(DIRECTORY_PROPERTY);
        if (property != null && !property.isBlank()) {
            return Path.of(property);
        }
        final String env = System.getenv(DIRECTORY_VARIABLE);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        return null;
    }

    /** Where the per-user default directories live: {@code /dev/shm} (memory, not disk), else the temp directory. */
    public static Path defaultBase() {
        final Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return shm;
        }
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    /**
     * The directories a reader looks in when not told which: the configured one if any, else every user's default
     * directory under {@link #defaultBase()} and the shared {@code tern} directory older builds used, so a reader
     * finds every stack a writer with default settings publishes, whoever runs either.
     */
    public static List<Path> defaultReadDirectories() throws IOException {
        final Path configured = configuredDirectory();
        if (configured != null) {
            return List.of(configured);
        }
        final Path base = defaultBase();
        try (Stream<Path> listing = Files.list(base)) {
            return listing.filter(p -> {
                final String name = p.getFileName().toString();
                return (name.equals(DIRECTORY_PREFIX) || name.startsWith(DIRECTORY_PREFIX + "-")) && Files.isDirectory(p);
            }).sorted().toList();
        }
    }

    /** This user's name as a file name, or {@code uidN} when the name is unknown or unsafe. */
    static String userTag() {
        final String name = System.getProperty("user.name", "");
        if (name.matches("[A-Za-z0-9._][A-Za-z0-9._-]{0,63}")) {
            return name;
        }
        try {
            return "uid" + Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "unknown";
        }
    }

    /** Creates a new counters file for stack {@code name} in {@code directory}. */
    public static CountersFile create(Path directory, String name, int maxCounters) {
        final long length = length(maxCounters);
        final Path path = directory.resolve(safeName(name) + "-" + ProcessHandle.current().pid() + "-"
            + SEQUENCE.incrementAndGet() + SUFFIX);
        final Arena arena = Arena.ofShared();
        try {
            Files.createDirectories(directory);
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                final MemorySegment memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
                path.toFile().deleteOnExit();
                return new CountersFile(arena, memory, path, name, maxCounters);
            }
        } catch (IOException e) {
            arena.close();
            throw new UncheckedIOException(cannotCreate(directory, e), e);
        }
    }

    /** One line that says where, why, and what to do: name another directory in TERN_COUNTERS_DIR. */
    static String cannotCreate(Path directory, IOException e) {
        final boolean configured = directory.equals(configuredDirectory());
        return "cannot create a counters file in " + (configured ? DIRECTORY_VARIABLE + "=" : "") + directory + ": "
            + reason(e) + "; set " + DIRECTORY_VARIABLE + " to a directory you can write";
    }

    /** The reason in words: for these exceptions the message is only the file's name. */
    private static String reason(IOException e) {
        return switch (e) {
            case AccessDeniedException d -> "permission denied" + on(d);
            case NoSuchFileException n -> "no such file or directory" + on(n);
            case FileAlreadyExistsException f -> "exists and is not a directory" + on(f);
            case FileSystemException f when f.getReason() != null -> f.getReason().toLowerCase(Locale.ROOT) + on(f);
            default -> e.getMessage() == null ? "input/output error" : e.getMessage();
        };
    }

    private static String on(FileSystemException e) {
        return e.getFile() == null ? "" : " (" + e.getFile() + ")";
    }

    /** Counters kept in process memory only: invisible to {@code tern stat}; for tests and short-lived stacks. */
    public static CountersFile inMemory(String name, int maxCounters) {
        final Arena arena = Arena.ofShared();
        final MemorySegment memory = arena.allocate(length(maxCounters), 64);
        return new CountersFile(arena, memory, null, name, maxCounters);
    }

    static long length(int maxCounters) {
        return HEADER_LENGTH + (long) maxCounters * (CountersReader.METADATA_LENGTH + CountersReader.COUNTER_LENGTH);
    }

    private static String safeName(String name) {
        return name.replaceAll("[^A-Za-z0-9_.]", "_");
    }

    /** Allocates a counter, e.g. {@code "ipv4.drop.bad_checksum"}. Cold path. */
    public AtomicCounter counter(String label) {
        return manager.newCounter(label);
    }

    /**
     * Allocates one counter per name, {@code prefix + names[i]}, for reasons indexed by code (drop reasons): the
     * counter for code {@code i} is element {@code i}. A null name leaves a gap (a code that is never counted).
     */
    public AtomicCounter[] counters(String prefix, String... names) {
        final AtomicCounter[] counters = new AtomicCounter[names.length];
        for (int i = 0; i < names.length; i++) {
            counters[i] = names[i] == null ? null : counter(prefix + names[i]);
        }
        return counters;
    }

    /** The value of the counter labelled {@code label}; throws when there is none. Scans: for tests and tools. */
    public long value(String label) {
        final int[] found = {-1};
        manager.forEach((id, text) -> {
            if (text.equals(label)) {
                found[0] = id;
            }
        });
        if (found[0] < 0) {
            throw new IllegalArgumentException("no counter '" + label + "' in " + name);
        }
        return manager.getCounterValue(found[0]);
    }

    /** A reader over this stack's counters (for tests and in-process tools). */
    public CountersReader reader() {
        return manager;
    }

    /** The file's path, or null for in-memory counters. */
    public Path path() {
        return path;
    }

    public String name() {
        return name;
    }

    @Override
    public void close() {
        arena.close();
        if (path != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                // The file is only a publication; a leftover is reported as stale by `tern stat`.
            }
        }
    }
}
