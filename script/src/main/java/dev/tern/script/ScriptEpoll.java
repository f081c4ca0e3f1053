package dev.tern.script;

import dev.tern.tcp.TcpEvents;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;

/**
 * The script's epoll instances (epoll_create, epoll_ctl, epoll_wait) on the readiness {@link ScriptSockets} computes
 * for poll. Level-triggered, an entry is ready while its socket is; with EPOLLET (edge-triggered), as Linux's, only
 * after a wakeup: when it is added, and when the stack tells of a change on its connection (data or a connection
 * arrived, room in the send ring, established, closed: Tern's {@link TcpEvents}, which this class receives for every
 * socket of the script). epoll_wait then reports the events that hold at that moment and forgets the wakeup.
 *
 * <p>Owned by one {@link ScriptSockets}.
 */
final class ScriptEpoll implements TcpEvents {
    static final int EPOLLIN = 0x1;
    static final int EPOLLOUT = 0x4;
    static final int EPOLLERR = 0x8;
    static final int EPOLLHUP = 0x10;
    static final int EPOLLET = 1 << 31;
    /** Reported once, then the entry waits for EPOLL_CTL_MOD to arm it again (epoll_ctl(2)). */
    static final int EPOLLONESHOT = 1 << 30;
    /** Wake one of the instances waiting on the descriptor; the runner waits in one at a time, so it is all. */
    static final int EPOLLEXCLUSIVE = 1 << 28;

    /** One socket in an epoll instance: what it waits for, and whether a wakeup is pending (for EPOLLET). */
    private static final class Entry {
        int events;
        boolean woken = true;
        /** EPOLLONESHOT: reported since the last arming, so silent until EPOLL_CTL_MOD. */
        boolean disarmed;
    }

    /** Each instance's entries, by the file descriptor watched, in the order added. */
    private final Map<Integer, Map<Integer, Entry>> instances = new LinkedHashMap<>();
    /** The descriptor's TCP connection or listener handle, or -1 (to map the stack's events to descriptors). */
    private final IntUnaryOperator handleOf;

    ScriptEpoll(IntUnaryOperator handleOf) {
        this.handleOf = handleOf;
    }

    /** epoll_create: a new instance, known by its descriptor. */
    void create(int epfd) {
        instances.put(epfd, new LinkedHashMap<>());
    }

    boolean isEpoll(int fd) {
        return instances.containsKey(fd);
    }

    void close(int fd) {
        instances.remove(fd);
        for (Map<Integer, Entry> entries : instances.values()) {
            entries.remove(fd);
        }
    }

    /** Whether the descriptor's entry in {@code epfd} was added with EPOLLEXCLUSIVE (which MOD may not change). */
    boolean exclusive(int epfd, int fd) {
        final Entry entry = instances.get(epfd).get(fd);
        return entry != null && (entry.events & EPOLLEXCLUSIVE) != 0;
    }

    /** EPOLL_CTL_ADD, MOD or DEL; false when the entry is missing (DEL, MOD) or already there (ADD): ENOENT, EEXIST. */
    boolean control(int epfd, String operation, int fd, int events) {
        final Map<Integer, Entry> entries = instances.get(epfd);
        return switch (operation) {
            case "EPOLL_CTL_ADD" -> {
                if (entries.containsKey(fd)) {
                    yield false;
                }
                final Entry entry = new Entry();
                entry.events = events;
                entries.put(fd, entry);
                yield true;
            }
            case "EPOLL_CTL_MOD" -> {
                final Entry entry = entries.get(fd);
                if (entry != null) {
                    entry.events = events;
                    entry.woken = true;
                    entry.disarmed = false;
                }
                yield entry != null;
            }
            default -> entries.remove(fd) != null;
        };
    }

    /** One ready entry: the descriptor and the events reported. */
    record Ready(int fd, int events) {
    }

    /**
     * The entries ready now, at most {@code max}, with {@code revents} the readiness of a descriptor (poll's bits);
     * with {@code take} an edge-triggered entry's wakeup is consumed, as epoll_wait does.
     */
    List<Ready> ready(int epfd, int max, IntUnaryOperator revents, boolean take) {
        final List<Ready> ready = new ArrayList<>();
        for (Map.Entry<Integer, Entry> e : instances.get(epfd).entrySet()) {
            final Entry entry = e.getValue();
            final boolean edge = (entry.events & EPOLLET) != 0;
            final int mask = revents.applyAsInt(e.getKey()) & (entry.events | EPOLLERR | EPOLLHUP);
            if ((!edge || entry.woken) && !entry.disarmed && mask != 0 && ready.size() < max) {
                ready.add(new Ready(e.getKey(), mask));
                // Linux clears a one-shot entry's events once it reported them, EPOLLERR included.
                entry.disarmed = take && (entry.events & EPOLLONESHOT) != 0;
            }
            if (edge && take) {
                entry.woken = false;
            }
        }
        return ready;
    }

    private void wake(int handle) {
        for (Map<Integer, Entry> entries : instances.values()) {
            for (Map.Entry<Integer, Entry> e : entries.entrySet()) {
                if (handleOf.applyAsInt(e.getKey()) == handle) {
                    e.getValue().woken = true;
                }
            }
        }
    }

    @Override
    public void acceptable(int listener) {
        wake(listener);
    }

    @Override
    public void established(int connection) {
        wake(connection);
    }

    @Override
    public void readable(int connection) {
        wake(connection);
    }

    @Override
    public void writable(int connection) {
        wake(connection);
    }

    @Override
    public void sendsCompleted(int connection) {
        wake(connection);
    }

    @Override
    public void closed(int connection, int error) {
        wake(connection);
    }
}
