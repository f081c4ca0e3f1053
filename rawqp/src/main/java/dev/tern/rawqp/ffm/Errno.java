package dev.tern.rawqp.ffm;

/**
 * Linux errno values as names and short meanings, for messages. Only the values libibverbs and the RDMA kernel
 * interface are known to return are spelled out; others print as their number. Stateless.
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int EPROTONOSUPPORT = 93;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int ETIMEDOUT = 110;

    private Errno() {
    }

    /** {@code "errno 38, ENOSYS: function not implemented"}. */
    public static String describe(int errno) {
        final String name = name(errno);
        return name == null ? "errno " + errno : "errno " + errno + ", " + name + ": " + meaning(errno);
    }

    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EIO -> "EIO";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC";
            case ENOSYS -> "ENOSYS";
            case EPROTONOSUPPORT -> "EPROTONOSUPPORT";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case EADDRINUSE -> "EADDRINUSE";
            case ETIMEDOUT -> "ETIMEDOUT";
            default -> null;
        };
    }

    private static String meaning(int errno) {
        return switch (errno) {
            case EPERM -> "operation not permitted";
            case ENOENT -> "no such file or directory";
            case EIO -> "input/output error";
            case ENOMEM -> "cannot allocate memory";
            case EACCES -> "permission denied";
            case EFAULT -> "bad address";
            case EBUSY -> "device or resource busy";
            case EEXIST -> "file exists";
            case ENODEV -> "no such device";
            case EINVAL -> "invalid argument";
            case ENOSPC -> "no space left on device";
            case ENOSYS -> "function not implemented";
            case EPROTONOSUPPORT -> "protocol not supported";
            case EOPNOTSUPP -> "operation not supported";
            case EADDRINUSE -> "address already in use";
            case ETIMEDOUT -> "connection timed out";
            default -> "unknown";
        };
    }
}
