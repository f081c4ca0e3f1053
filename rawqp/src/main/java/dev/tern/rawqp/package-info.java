/**
 * rawqp: Ethernet {@link dev.tern.ethernet.link.Link}s on RDMA NICs' raw-packet queue pairs.
 *
 * <p>Entry points: {@link dev.tern.rawqp.RdmaDevices#list()} (what is there, never throws) and
 * {@link dev.tern.rawqp.RawQpLinks#open} (a link, or a one-line {@link dev.tern.rawqp.LinkUnavailableException}).
 * Two data paths: {@link dev.tern.rawqp.Mlx5Link} (mlx5 direct verbs, WQEs and CQEs in Java) and
 * {@link dev.tern.rawqp.RawQpLink} (verbs post/poll through the provider). Bindings are in {@code ffm}, the mlx5 ring
 * formats and ring logic in {@code mlx5}. See rawqp/README.md for what has and has not run on hardware.
 */
package dev.tern.rawqp;
