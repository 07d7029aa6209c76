// TL211 dataloader-main-process (opt-in): a DataLoader that is not for training (evaluation,
// inference, a script's only loader) and loads in the main process.
#include "catalog.h"
#include "python/shared/dataloader_workers.h"

namespace torchlint {

python::RuleEntry dataloader_main_process_rule() {
  return python::rule_entry<python::dataloader_workers::DataloaderWorkers<false>>(catalog_entry("TL211"));
}

}  // namespace torchlint
