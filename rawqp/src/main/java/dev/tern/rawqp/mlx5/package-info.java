/**
 * The mlx5 direct-verbs data path without any native call: send WQE and CQE formats as flyweights
 * ({@link dev.tern.rawqp.mlx5.Mlx5SendWqe}, {@link dev.tern.rawqp.mlx5.Mlx5Cqe64},
 * {@link dev.tern.rawqp.mlx5.Mlx5DataSegment}) and the software side of the rings
 * ({@link dev.tern.rawqp.mlx5.SendQueue}, {@link dev.tern.rawqp.mlx5.ReceiveQueue},
 * {@link dev.tern.rawqp.mlx5.CompletionQueue}) over the memory described by {@link dev.tern.rawqp.mlx5.Mlx5Rings}.
 */
package dev.tern.rawqp.mlx5;
