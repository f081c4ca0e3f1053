package dev.tern.testkit.netns;

import dev.tern.core.sys.Libc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A named network namespace ({@code ip netns add NAME}, bind-mounted at {@code /run/netns/NAME}) that a test
 * created and {@link #close() deletes}.
 *
 * <p>Two ways in: {@link #exec}/{@link #start} run a program inside it ({@code ip netns exec NAME ...});
 * {@link #call} moves the <em>calling thread</em> into it with {@code setns(2)}, runs Java code there (open a socket,
 * write a sysctl) and moves the thread back. A socket keeps the namespace it was created in, so a link opened inside
 * {@link #call} goes on working from any thread afterwards. {@code setns} affects only the calling thread; the rest
 * of the JVM stays where it was.
 *
 * <p>Thread-safe (each call is independent); {@link #close()} once, by the owner.
 */
public final class NetworkNamespace implements AutoCloseable {
    private static final Path RUN_DIRECTORY = Path.of("/run/netns");
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

    private final String name;
    private final String ip;
    private volatile boolean deleted;

    private NetworkNamespace(String name, String ip) {
        this.name = name;
        this.ip = ip;
    }

    /** Creates a namespace called {@code name}; fails if one exists already (never adopts someone else's). */
    public static NetworkNamespace create(String name) {
        final String ip = Commands.require("ip", "iproute2");
        Commands.run(COMMAND_TIMEOUT, ip, "netns", "add", name).orThrow();
        return new NetworkNamespace(name, ip);
    }

    public String name() {
        return name;
    }

    public boolean exists() {
        return Files.exists(RUN_DIRECTORY.resolve(name));
    }

    /** Runs a program inside the namespace and waits for it (bounded by {@code timeout}). */
    public CommandResult exec(Duration timeout, String... command) {
        return Commands.run(timeout, inside(List.of(command)));
    }

    /** Starts a program inside the namespace in the background. */
    public BackgroundCommand start(String... command) {
        return Commands.start(inside(List.of(command)));
    }

    /** {@code ip -n NAME ARGS...}: an iproute2 command against this namespace, which must succeed. */
    public CommandResult ip(String... arguments) {
        final List<String> command = new ArrayList<>(List.of(ip, "-n", name));
        command.addAll(List.of(arguments));
        return Commands.run(COMMAND_TIMEOUT, command).orThrow();
    }

    private List<String> inside(List<String> command) {
        final List<String> full = new ArrayList<>(List.of(ip, "netns", "exec", name));
        full.addAll(command);
        return full;
    }

    /**
     * Runs {@code body} on the calling thread inside this namespace and returns the thread to the namespace it was
     * in before, also when {@code body} throws. If the thread cannot be moved back, that is an
     * {@link IllegalStateException}: the thread must not go on in the wrong namespace.
     */
    public <T> T call(Supplier<T> body) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = Libc.newCallState(arena);
            final int original = check("open(/proc/thread-self/ns/net)",
                Libc.open(state, arena.allocateFrom("/proc/thread-self/ns/net"), Libc.O_RDONLY | Libc.O_CLOEXEC), state);
            try {
                final String path = RUN_DIRECTORY.resolve(name).toString();
                final int target = check("open(" + path + ")",
                    Libc.open(state, arena.allocateFrom(path), Libc.O_RDONLY | Libc.O_CLOEXEC), state);
                try {
                    check("setns(" + name + ", CLONE_NEWNET)", Libc.setns(state, target, Libc.CLONE_NEWNET), state);
                    try {
                        return body.get();
                    } finally {
                        if (Libc.setns(state, original, Libc.CLONE_NEWNET) == -1) {
                            throw new IllegalStateException("cannot return thread " + Thread.currentThread().getName()
                                + " to its network namespace: " + failure("setns", Libc.errno(state)));
                        }
                    }
                } finally {
                    Libc.close(state, target);
                }
            } finally {
                Libc.close(state, original);
            }
        }
    }

    /** Returns {@code rc}, or throws naming {@code call} and its errno when {@code rc == -1}. */
    private int check(String call, int rc, MemorySegment callState) {
        if (rc == -1) {
            throw new NetnsException("cannot enter network namespace " + name + ": " + failure(call, Libc.errno(callState)));
        }
        return rc;
    }

    private static String failure(String call, int errno) {
        return call + " failed: " + Libc.errnoName(errno) + " (" + errno + ")";
    }

    /** {@link #call} for code that returns nothing. */
    public void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    /**
     * Writes a sysctl of this namespace, e.g. {@code sysctl("net.ipv4.ip_forward", "0")}. Only {@code net.*} keys are
     * per namespace; any other key would change the host, so it is refused. Keys with dots in a device name are not
     * supported.
     */
    public void sysctl(String key, String value) {
        requireNetKey(key);
        run(() -> {
            final Path file = Path.of("/proc/sys", key.replace('.', '/'));
            try {
                Files.writeString(file, value);
            } catch (IOException e) {
                throw new NetnsException("cannot set " + key + "=" + value + " in namespace " + name + ": " + e, e);
            }
        });
    }

    /** Reads a sysctl ({@code net.*}) of this namespace. */
    public String sysctl(String key) {
        requireNetKey(key);
        return call(() -> {
            try {
                return Files.readString(Path.of("/proc/sys", key.replace('.', '/'))).strip();
            } catch (IOException e) {
                throw new NetnsException("cannot read " + key + " in namespace " + name + ": " + e, e);
            }
        });
    }

    private static void requireNetKey(String key) {
        if (!key.startsWith("net.") || key.contains("/") || key.contains("..")) {
            throw new IllegalArgumentException("'" + key + "' is not a per-namespace net.* sysctl");
        }
    }

    /** Deletes the namespace ({@code ip netns del}), which also destroys the interfaces in it. Idempotent. */
    @Override
    public void close() {
        if (!deleted) {
            deleted = true;
            if (exists()) {
                Commands.run(COMMAND_TIMEOUT, ip, "netns", "del", name).orThrow();
            }
        }
    }

    @Override
    public String toString() {
        return "netns " + name;
    }
}
