"""The regions each price API is asked for, and the deadline each refresh gets, when the
user names none.

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

# Seconds a whole refresh (every request, page, file, retry and wait) may take. The
# aws-public files are hundreds of MB per region; Azure's default regions are a few
# dozen pages; the SkyPilot catalog is ten files of a few MB.
DEFAULT_DEADLINES_S: dict[str, float] = {
    "aws": 1800.0,
    "gcp": 1800.0,
    "azure": 600.0,
    "aws-public": 3600.0,
    "skypilot": 300.0,
}
