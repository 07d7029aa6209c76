"""One training step of a small classifier: the start-up benchmark's input."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, in_features: int, classes: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 128), nn.ReLU(), nn.Dropout(0.1))
        self.head = nn.Linear(128, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def train_step(model, batch, optimizer, device="cuda"):
    inputs, targets = batch[0].to(device), batch[1].to(device)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
