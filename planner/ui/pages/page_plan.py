"""st.navigation page script: draws planner.ui.plan_page."""

from planner.ui import plan_page
from planner.ui.state import PageState

plan_page.render()
# The Plan page keeps no inputs in the URL yet: drop another page's parameters.
PageState("plan").sync()
