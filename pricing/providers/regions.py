"""The regions each price API is asked for when the user names none.

Kept apart from the fetchers (which import pandas) so that `gpuplan pricing refresh --help`
can list them without loading the catalog code.
"""

DEFAULT_REGIONS: dict[str, tuple[str, ...]] = {
    "aws": ("us-east-1", "us-east-2", "us-west-2", "eu-west-1"),
    "gcp": ("us-central1", "us-east4", "europe-west4", "asia-east1"),
    "azure": ("eastus", "eastus2", "southcentralus", "westus2", "westus3", "westeurope"),
    "aws-public": ("us-east-1", "us-east-2", "us-west-2", "eu-west-1"),
    "skypilot": (),  # every region in the catalog
}
