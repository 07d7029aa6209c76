#include <doctest/doctest.h>

#include "python/api_tables.h"
#include "python/training_checkpoint.h"

using namespace torchlint::python;

// The two notions differ on purpose: the receiver of `.step()` / `.zero_grad()` is an
// optimizer by a loose reading of its name, a bare variable only by a strict one.
TEST_CASE("receiver and variable names of optimizers") {
  for (const char* both : {"optimizer", "self.optimizer", "g_optim", "optimizer_d", "optimizers"}) {
    CHECK(api::receiver_names_optimizer(both));
    CHECK(variable_names_optimizer(both));
  }
  // `opt = parser.parse_args()` and configurations: `.step()` on them would be an
  // optimizer's, but the names alone do not make them optimizers to checkpoint.
  for (const char* receiver_only : {"opt", "self.opt", "optimizer_cfg", "optimizer_name", "optim_state", "opt_g"}) {
    CHECK(api::receiver_names_optimizer(receiver_only));
    CHECK_FALSE(variable_names_optimizer(receiver_only));
  }
  for (const char* neither : {"scheduler", "lr_scheduler", "model", "optimizer_sched"}) {
    CHECK_FALSE(api::receiver_names_optimizer(neither));
    CHECK_FALSE(variable_names_optimizer(neither));
  }
}

TEST_CASE("variable names of schedulers") {
  for (const char* yes : {"scheduler", "lr_scheduler", "sched", "self.lrs"}) CHECK(variable_names_scheduler(yes));
  for (const char* no : {"noise_scheduler", "scheduler_cfg", "sched_state", "optimizer", "schedule"})
    CHECK_FALSE(variable_names_scheduler(no));
}
