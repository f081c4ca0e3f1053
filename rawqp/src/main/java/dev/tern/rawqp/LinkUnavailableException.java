package dev.tern.rawqp;

/**
 * A rawqp link cannot be opened on this machine: no libibverbs, no RDMA subsystem, no such device or port, no
 * permission. The message is one line meant for a person (the CLI prints it as is): what is missing, and that
 * {@code --link afpacket:IFACE} and {@code --link memory} work without RDMA hardware.
 *
 * <p>These are expected conditions, not bugs, so the exception carries no stack trace and no cause.
 */
public final class LinkUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What every message ends with. */
    public static final String ALTERNATIVES = "--link afpacket:IFACE and --link memory work on this machine";

    /**
     * @param link   the link as the user named it, e.g. {@code rawqp:mlx5_0:1}
     * @param reason what is missing, e.g. "libibverbs.so.1 not found: install the Debian packages ..."
     */
    public LinkUnavailableException(String link, String reason) {
        super(oneLine(link + " unavailable: " + reason + "; " + ALTERNATIVES), null, false, false);
    }

    private static String oneLine(String text) {
        return text.replaceAll("\\s*[\\r\\n]+\\s*", " ").trim();
    }
}
