#pragma once
// The host suites, registered from main: some iterate registries that are built during static
// initialisation, so registering from static initialisers of their own would race them.
namespace cplab::bench {

void register_token_move_benchmarks();
void register_loss_benchmarks();
void register_planning_benchmarks();
void register_collective_benchmarks();
void register_sweep_benchmarks();
void register_check_benchmarks();
void register_attention_benchmarks();
void register_process_benchmarks();
void register_json_writer_benchmarks();

}  // namespace cplab::bench
