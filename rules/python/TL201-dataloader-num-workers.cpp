// TL201 dataloader-num-workers: a training DataLoader that loads in the main process.
#include "catalog.h"
#include "python/shared/dataloader_workers.h"

namespace torchlint {

python::RuleEntry dataloader_num_workers_rule() {
  return python::rule_entry<python::dataloader_workers::DataloaderWorkers<true>>(catalog_entry("TL201"));
}

}  // namespace torchlint
