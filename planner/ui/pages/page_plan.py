"""st.navigation page script: draws planner.ui.plan_page."""

from planner.ui import plan_page

plan_page.render()
