package dev.tern.rawqp.ffm;

/**
 * The shared objects the bindings load at run time, by soname. {@link #DEFAULT} is what rdma-core installs; tests
 * name a library that does not exist to exercise the "not installed" path on a machine where it is.
 *
 * @param verbs soname of libibverbs (Debian package {@code libibverbs1})
 * @param mlx5  soname of the mlx5 provider with its direct-verbs API (Debian package {@code ibverbs-providers})
 */
public record NativeLibraries(String verbs, String mlx5) {
    public static final NativeLibraries DEFAULT = new NativeLibraries("libibverbs.so.1", "libmlx5.so.1");

    /** What to install when {@link #verbs()} is missing. */
    public static final String VERBS_PACKAGES = "libibverbs1 and ibverbs-providers";
    /** What to install when {@link #mlx5()} is missing. */
    public static final String MLX5_PACKAGE = "ibverbs-providers";
}
